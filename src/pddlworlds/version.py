"""The package version, in a module of its own so that any layer can read it without importing the package
front (whose `__init__` registers the environments, a layer above most of the package)."""

__version__ = "0.1.0"
