package dev.fencing.e2e.peer;

/** Which implementation a gossip peer process runs. */
public enum PeerKind {
    /** The Java memberlist node jar of this project. */
    JAVA,
    /** The Go reference peer built against Debian's hashicorp/memberlist 0.2.2. */
    GO
}
