"""Jinja templates of opgen, shipped as package data (``opgen.templates``)."""
