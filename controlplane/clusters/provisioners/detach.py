"""`python -m controlplane.clusters.provisioners.detach LOG_FILE PID_FILE COMMAND...`

Starts COMMAND in its own session with output appended to LOG_FILE, writes its pid, and exits at once.
Running this as an intermediate process means the broker is re-parented to init, which reaps it: it
outlives the web and worker processes and never lingers as a zombie of theirs. Imports no Django.
"""

import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    log_file, pid_file, *command = argv
    with open(log_file, "ab") as output:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    Path(pid_file).write_text(f"{process.pid}\n")
    print(process.pid)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
