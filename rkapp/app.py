"""Entry script of the installed app (the `rkcore-app` command runs it); same as the repository's app.py."""
from rkapp.navigation import run

run()
