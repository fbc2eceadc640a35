package dev.fencing.e2e.peer;

/** Which implementation a gossip peer process runs. */
public enum PeerKind {
    /** The Java memberlist node jar of this project. */
    JAVA(null),
    /** The Go reference peer built against Debian's hashicorp/memberlist 0.2.2 (GOPATH mode, offline). */
    GO("v0.2.2"),
    /** The Go reference peer built from the module proxy against v0.5.4, the version Deckhouse's agent pins. */
    GO_054("v0.5.4"),
    /** The Go reference peer built from the module proxy against the latest release (pinned in e2e/go's go.mod). */
    GO_LATEST(GoPeerBinary.LATEST_VERSION);

    private final String memberlistVersion;

    PeerKind(String memberlistVersion) {
        this.memberlistVersion = memberlistVersion;
    }

    /** @return whether this is one of the Go reference peers */
    public boolean isGo() {
        return memberlistVersion != null;
    }

    /** @return the hashicorp/memberlist version a Go kind links ({@code v0.2.2}…); null for {@link #JAVA} */
    public String memberlistVersion() {
        return memberlistVersion;
    }

    /** @return whether the implementation has gossip labels and SkipInboundLabelCheck (memberlist ≥ 0.3, Java) */
    public boolean supportsLabels() {
        return this != GO;
    }

    /** @return whether the members lines tell suspect from alive and left from dead (everything but 0.2.2) */
    public boolean reportsRealStates() {
        return this != GO;
    }
}
