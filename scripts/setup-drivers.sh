#!/usr/bin/env bash
# Installs the CPU Vulkan drivers that the tests need on a machine without a GPU (see README, "Testing").
#   - Mesa lavapipe from bookworm-backports: the Node tests run Dawn (npm `webgpu`) on it.
#   - Debian's chromium: the browser tests, on its bundled SwiftShader.
# Installs only what is missing. As root it runs apt-get; otherwise it prints the commands to run.
set -euo pipefail

need_lvp=1; need_chromium=1
[ -f /usr/share/vulkan/icd.d/lvp_icd.json ] && need_lvp=0
[ -x /usr/bin/chromium ] && need_chromium=0
if [ "${PIPLAY_SKIP_BROWSER:-0}" = 1 ]; then need_chromium=0; fi
[ $need_lvp = 0 ] && [ $need_chromium = 0 ] && exit 0

codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
cmds=()
if [ $need_lvp = 1 ]; then
  if [ "$codename" = bookworm ]; then
    # Debian 12's own Mesa 22 lavapipe is refused by Dawn; backports has Mesa 25.
    cmds+=("echo 'deb http://deb.debian.org/debian bookworm-backports main' > /etc/apt/sources.list.d/piplay-backports.list")
    cmds+=("apt-get update")
    cmds+=("DEBIAN_FRONTEND=noninteractive apt-get install -y -t bookworm-backports mesa-vulkan-drivers")
  else
    cmds+=("apt-get update")
    cmds+=("DEBIAN_FRONTEND=noninteractive apt-get install -y mesa-vulkan-drivers")
  fi
fi
if [ $need_chromium = 1 ]; then
  [ $need_lvp = 1 ] || cmds+=("apt-get update")
  cmds+=("DEBIAN_FRONTEND=noninteractive apt-get install -y chromium")
fi

if [ "$(id -u)" != 0 ]; then
  echo "piplay: the CPU Vulkan drivers for the tests are missing. Run as root:" >&2
  for c in "${cmds[@]}"; do echo "  $c" >&2; done
  exit 1
fi
echo "piplay: installing CPU Vulkan drivers for the tests (once)..." >&2
for c in "${cmds[@]}"; do bash -c "$c" >&2; done
