"""What pyproject.toml cannot say: the repository's pages/ folder ships inside the rkapp package
(as rkapp/pages, next to rkapp/app.py), so no top-level `pages` package lands in site-packages."""
from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["rkcore", "rkcore.*", "rkapp", "rkapp.*"]), "rkapp.pages"],
    package_dir={"rkapp.pages": "pages"},
)
