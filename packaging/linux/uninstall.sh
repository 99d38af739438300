#!/usr/bin/env bash
# Remove what install.sh installed for the current user, and nothing else:
#   ~/.local/opt/Assistant/, ~/.local/share/applications/assistant.desktop and
#   ~/.local/share/icons/hicolor/<N>x<N>/apps/assistant.png.
# Your conversations, memories and settings (the data directory) and the API key in the keyring
# are kept. ASSISTANT_INSTALL_HOME and XDG_DATA_HOME are read as in install.sh. Safe to run twice.
set -euo pipefail

if [ -n "${ASSISTANT_INSTALL_HOME:-}" ]; then
    home="$ASSISTANT_INSTALL_HOME"
    data_home="$home/.local/share"
else
    home="${HOME:?HOME is not set}"
    data_home="${XDG_DATA_HOME:-$home/.local/share}"
fi
opt_dir="$home/.local/opt/Assistant"
desktop_file="$data_home/applications/assistant.desktop"
icon_theme="$data_home/icons/hicolor"
icon_sizes=(16 24 32 48 64 128 256 512)

rm -rf "$opt_dir" "$opt_dir.new"
rm -f "$desktop_file" "$desktop_file.new"
for size in "${icon_sizes[@]}"; do
    rm -f "$icon_theme/${size}x${size}/apps/assistant.png"
done

# Refresh the caches the desktop already keeps (the tools would otherwise leave new files
# behind); a failure here does not undo the uninstall.
if command -v update-desktop-database >/dev/null 2>&1 && [ -f "$(dirname "$desktop_file")/mimeinfo.cache" ]; then
    update-desktop-database "$(dirname "$desktop_file")" >/dev/null 2>&1 || true
fi
if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$icon_theme/icon-theme.cache" ]; then
    gtk-update-icon-cache --quiet --ignore-theme-index "$icon_theme" >/dev/null 2>&1 || true
fi

echo "Removed Assistant from $opt_dir and its menu entry and icons."
echo "Your data directory and the API key in the keyring were kept."
