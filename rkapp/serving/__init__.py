"""Serving the app to a class: several app processes behind nginx (:mod:`rkapp.serving.proxy`)."""
