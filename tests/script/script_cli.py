# SPDX-License-Identifier: MIT
"""`gpuplan script` as the script tests call it."""
import json
import subprocess


def script_for(gpuplan, request):
    """The program `gpuplan script` writes for `request`; fails the test when it refuses."""
    run = subprocess.run([gpuplan, "script", "-"], input=json.dumps(request), text=True,
                         capture_output=True, check=False)
    if run.returncode != 0:
        raise AssertionError(f"gpuplan script failed: {run.stderr}")
    return run.stdout
