"""Qt user interface; `ui/worker.py` is the only bridge to the agent."""
