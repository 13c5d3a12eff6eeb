"""`python -m course_lib.offline_model --port 8765 [--host 127.0.0.1]`: serve the offline model."""

from course_lib.offline_model.server import main

if __name__ == "__main__":
    main()
