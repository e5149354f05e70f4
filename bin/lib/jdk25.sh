# Sourced by .ci/run and bin/demo: finds a JDK 25 and exports JAVA_HOME and PATH for it.
# Looks at $JAVA_HOME if it is a JDK 25, else /usr/lib/jvm/*25*, else the `java` on the PATH;
# otherwise fails and says how to fix it.

# Prints the feature release (e.g. 25) of the JDK at $1, or nothing.
jdk_major() {
    [[ -x "$1/bin/java" && -x "$1/bin/javac" ]] || return 0
    "$1/bin/java" -version 2>&1 | sed -nE '1s/.*version "(1\.)?([0-9]+).*/\2/p'
}

find_jdk25() {
    local candidate
    if [[ -n "${JAVA_HOME:-}" && "$(jdk_major "$JAVA_HOME")" == 25 ]]; then
        echo "$JAVA_HOME"
        return 0
    fi
    for candidate in /usr/lib/jvm/*25*; do
        if [[ "$(jdk_major "$candidate")" == 25 ]]; then
            echo "$candidate"
            return 0
        fi
    done
    if command -v java >/dev/null 2>&1; then
        candidate="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
        if [[ "$(jdk_major "$candidate")" == 25 ]]; then
            echo "$candidate"
            return 0
        fi
    fi
    return 1
}

if ! JAVA_HOME="$(find_jdk25)"; then
    echo "error: no JDK 25 found (looked at JAVA_HOME='${JAVA_HOME:-}', /usr/lib/jvm/*25*, and java on the PATH)." >&2
    echo "       Install a JDK 25 (for example Eclipse Temurin 25 from https://adoptium.net) and set JAVA_HOME to it." >&2
    exit 1
fi
export JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"

