"""The course on a JupyterHub for a workshop: the one hub config (`jupyterhub_config.py`), the
instructor's room view (`room.py`, its data `roomdata.py`, and `room_catalog.json`, which
`catalog.py` makes from the notebooks and INSTRUCTOR.md), the local hub of `make hub` and the tests
(`hub.py`, with `local_config.py`), a learner driven through the hub (`learner.py`), and the files
for The Littlest JupyterHub (`tljh.sh`) and Zero to JupyterHub (`kubernetes/config.yaml`).
README.md says which parts are tested here and which only on a real VM or cluster."""
