#!/bin/sh
# run.sh — the main job: installs what is missing, builds srd, and runs the default example
# (the PneuNet finger): checks it and prints its elaborated model.
set -e
cd "$(dirname "$0")/.."
sh scripts/setup.sh
sh scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
./build/srdc check examples/pneunet.srd
./build/srdc dump examples/pneunet.srd
