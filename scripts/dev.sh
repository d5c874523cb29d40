#!/usr/bin/env bash
# One entry point for set-up, build, run and test on a fresh Debian machine.
#   scripts/dev.sh run [ampscope-ui args]   install what is missing, build, open the GUI
#   scripts/dev.sh test                     install what is missing, build, run every test
#   scripts/dev.sh setup | configure | build   the steps on their own
# LibTorch comes from the pinned PyPI torch wheel, installed into a virtual
# environment under ${AMPSCOPE_CACHE:-~/.cache/ampscope}, outside the clone, so
# re-runs and CI reuse it. Set AMPSCOPE_TORCH_PREFIX to use your own LibTorch.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=deps.env
source "$here/scripts/deps.env"
cache="${AMPSCOPE_CACHE:-$HOME/.cache/ampscope}"
venv="$cache/torch-$TORCH_VERSION"
preset="${AMPSCOPE_PRESET:-default}"
log() { printf '\033[1m[ampscope]\033[0m %s\n' "$*" >&2; }

sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

install_debian_packages() {
  local missing=() wanted="$APT_PACKAGES"
  [ "$preset" = server ] || wanted="$wanted $APT_GUI_PACKAGES"
  for p in $wanted; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    sudo_if_needed apt-get update -qq
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

install_torch() {
  if [ -n "${AMPSCOPE_TORCH_PREFIX:-}" ]; then return; fi
  if ! { [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import torch,sys; sys.exit(torch.__version__.split('+')[0] != '$TORCH_VERSION')" 2>/dev/null; }; then
    log "installing torch==$TORCH_VERSION (LibTorch and the Python reference peer) into $venv"
    mkdir -p "$cache/wheels"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check --find-links "$cache/wheels" "torch==$TORCH_VERSION"
  fi
  # The test peers: installed again only when the list in deps.env changes.
  local stamp="$venv/.ampscope-test-packages"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$PYTHON_TEST_PACKAGES" ]; then
    log "installing the Python test peers: $PYTHON_TEST_PACKAGES"
    # shellcheck disable=SC2086
    "$venv/bin/pip" install -q --disable-pip-version-check "torch==$TORCH_VERSION" $PYTHON_TEST_PACKAGES
    printf '%s' "$PYTHON_TEST_PACKAGES" > "$stamp"
  fi
}

torch_prefix() {
  if [ -n "${AMPSCOPE_TORCH_PREFIX:-}" ]; then echo "$AMPSCOPE_TORCH_PREFIX"; return; fi
  "$venv/bin/python" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
}

setup() { install_debian_packages; install_torch; }

# Configures build/$preset when it is not, or not for this LibTorch and Python.
configure() {
  local prefix; prefix="$(torch_prefix)"
  local py=""; [ -x "$venv/bin/python" ] && py="$venv/bin/python"
  cd "$here"
  local cache_file="build/$preset/CMakeCache.txt"
  cached() { sed -n "s/^$1:[A-Z]*=//p" "$cache_file" 2>/dev/null; }
  # Configure again when the LibTorch or the Python differs from what the build
  # was configured with (a later AMPSCOPE_TORCH_PREFIX must not be ignored).
  # Torch_DIR and its friends are cached from the old prefix: a new prefix
  # starts from a fresh cache (the objects stay, ccache has the rest).
  if [ -f "$cache_file" ] && [ "$(cached CMAKE_PREFIX_PATH)" != "$prefix" ]; then
    log "LibTorch changed ($(cached CMAKE_PREFIX_PATH) -> $prefix): configuring build/$preset again"
    rm -f "$cache_file"
  fi
  if [ ! -f "$cache_file" ] || [ "$(cached AMPSCOPE_PYTHON)" != "$py" ]; then
    cmake --preset "$preset" -DCMAKE_PREFIX_PATH="$prefix" -DAMPSCOPE_PYTHON="$py"
  fi
}

build() { configure; cmake --build --preset "$preset"; }

cmd="${1:-}"; shift || true
case "$cmd" in
  setup) setup ;;
  configure) setup; configure ;;
  build) setup; build ;;
  run)
    setup; build
    if [ -x "$here/build/$preset/app/ui/ampscope-ui" ]; then
      exec "$here/build/$preset/app/ui/ampscope-ui" "$@"
    fi
    log "the GUI is not built here (AMPSCOPE_BUILD_GUI=OFF?): running the CLI's default session"
    exec "$here/build/$preset/app/cli/ampscope" train "$@"
    ;;
  test)
    setup; build
    cd "$here"
    ctest --preset "$preset" "$@"
    ;;
  *) sed -n '2,9p' "$0"; exit 2 ;;
esac
