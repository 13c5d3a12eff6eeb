"""The exercise tests run in whatever environment the developer has: the checks are offline by
construction (`course_lib.exercises.offline`), so nothing here drops `OPENAI_API_KEY` or any other
setting (`test_offline_checks.py` proves it with keys set and an unreachable endpoint)."""
