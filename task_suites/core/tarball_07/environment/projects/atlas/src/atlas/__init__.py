__version__ = "3.8.9"
