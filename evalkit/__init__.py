"""evalkit: local, offline, reproducible evaluation of LLM agents and agent skills."""

__version__ = "0.1.0"
__all__ = ["__version__"]
