"""The window's furniture: the main window, its menus, status bar and side panes."""
