"""Example evalkit trace-format plug-in: OpenHands event streams and SWE-agent trajectories."""

from evalkit_agent_formats.openhands import FORMAT as OPENHANDS
from evalkit_agent_formats.swe_agent import FORMAT as SWE_AGENT

__all__ = ["OPENHANDS", "SWE_AGENT"]
