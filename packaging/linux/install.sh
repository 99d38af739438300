#!/usr/bin/env bash
# Install the Assistant bundle for the current user, no root needed:
#   the bundle          -> ~/.local/opt/Assistant/
#   the desktop entry   -> ~/.local/share/applications/assistant.desktop
#   the icon            -> ~/.local/share/icons/hicolor/<N>x<N>/apps/assistant.png
# Usage: install.sh [BUNDLE_DIR]   (default: the folder this script is in, when it is the bundle,
#                                   else dist/Assistant of the repository)
# ASSISTANT_INSTALL_HOME installs under another home (tests); otherwise $XDG_DATA_HOME is honoured.
# Running it again replaces the installed copy. uninstall.sh removes exactly what this installs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
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

if [ $# -gt 0 ]; then
    bundle="$1"
elif [ -x "$here/Assistant" ] && [ -d "$here/_internal" ]; then
    bundle="$here"
else
    bundle="$here/../../dist/Assistant"
fi
if [ ! -x "$bundle/Assistant" ] || [ ! -d "$bundle/_internal/resources" ]; then
    echo "install.sh: no Assistant bundle in $bundle (build it with 'make package')" >&2
    exit 1
fi
bundle="$(cd "$bundle" && pwd)"
resources="$bundle/_internal/resources"
if [ "$bundle" = "$opt_dir" ]; then
    echo "install.sh: $bundle is already the installed copy" >&2
    exit 1
fi
exe="$opt_dir/Assistant"
case "$exe" in
    *[\"\`\$\\%]*)
        echo "install.sh: a menu entry cannot run $exe (quote, \$, % or backslash in the path)" >&2
        exit 1
        ;;
esac

# Copy next to the old install, then swap, so a failed copy leaves the old one working.
mkdir -p "$(dirname "$opt_dir")"
rm -rf "$opt_dir.new"
cp -a "$bundle" "$opt_dir.new"
if [ -f "$here/uninstall.sh" ]; then
    cp "$here/uninstall.sh" "$opt_dir.new/uninstall.sh"
fi
rm -rf "$opt_dir"
mv "$opt_dir.new" "$opt_dir"

# The desktop entry runs the installed executable by its absolute path, quoted for spaces.
mkdir -p "$(dirname "$desktop_file")"
while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
        Exec=*) printf 'Exec="%s"\n' "$exe" ;;
        TryExec=*) printf 'TryExec=%s\n' "$exe" ;;
        *) printf '%s\n' "$line" ;;
    esac
done <"$resources/linux/assistant.desktop" >"$desktop_file.new"
chmod 644 "$desktop_file.new"
mv "$desktop_file.new" "$desktop_file"

for size in "${icon_sizes[@]}"; do
    target="$icon_theme/${size}x${size}/apps/assistant.png"
    mkdir -p "$(dirname "$target")"
    cp "$resources/icons/assistant-$size.png" "$target.new"
    chmod 644 "$target.new"
    mv "$target.new" "$target"
done

# Refresh the caches the desktop already keeps (the tools would otherwise leave new files
# behind); a failure here does not undo the install.
if command -v update-desktop-database >/dev/null 2>&1 && [ -f "$(dirname "$desktop_file")/mimeinfo.cache" ]; then
    update-desktop-database "$(dirname "$desktop_file")" >/dev/null 2>&1 || true
fi
if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$icon_theme/icon-theme.cache" ]; then
    gtk-update-icon-cache --quiet --ignore-theme-index "$icon_theme" >/dev/null 2>&1 || true
fi

echo "Installed Assistant in $opt_dir"
echo "Menu entry: $desktop_file (uninstall with $opt_dir/uninstall.sh)"
