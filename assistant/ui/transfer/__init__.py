"""Export and import: dialogs, and exports dropped on the window."""
