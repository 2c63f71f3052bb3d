# Helpers shared by the service scripts (sourced, not run).

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# wait_for SECONDS COMMAND...: polls COMMAND every 0.2 s until it succeeds.
wait_for() {
    local limit=$1
    shift
    local deadline=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}

# apt_install PACKAGE...: as root (or through sudo), bounded; updates the lists once if the first try fails.
apt_install() {
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    timeout 300 $sudo apt-get install -y -q "$@" >&2 ||
        { timeout 180 $sudo apt-get update -q >&2 && timeout 300 $sudo apt-get install -y -q "$@" >&2; }
}

# detached COMMAND...: runs COMMAND in the background without the caller's descriptors above 2 (the caller's own
# stdin, stdout and stderr are the command's to redirect). A server started by a script must not hold a pipe or a
# socket its caller waits on: Foundation's Process learns that its child exited when such a descriptor closes.
detached() {
    (
        for fd in /proc/$BASHPID/fd/*; do
            fd=${fd##*/}
            if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
        done
        exec "$@"
    ) &
}
