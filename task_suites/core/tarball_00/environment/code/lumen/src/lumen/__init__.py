__version__ = "3.2.7"
