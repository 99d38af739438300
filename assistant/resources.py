"""Files shipped beside the code (icons, desktop entry), found from source and when frozen."""

from __future__ import annotations

import sys
from pathlib import Path

APP_ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def resources_root() -> Path:
    """The `resources` directory: in the PyInstaller bundle when frozen, else the repository's."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


def resource_path(*parts: str) -> Path:
    """The path of a resource, such as `resource_path("icons", "assistant.svg")`."""
    return resources_root().joinpath(*parts)


def app_icon_files() -> list[Path]:
    """The PNG renderings of the application icon that are present, smallest first."""
    candidates = (resource_path("icons", f"assistant-{size}.png") for size in APP_ICON_SIZES)
    return [path for path in candidates if path.is_file()]
