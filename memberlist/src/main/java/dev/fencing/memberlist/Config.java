package dev.fencing.memberlist;

import dev.fencing.memberlist.codec.Keyring;
import dev.fencing.memberlist.codec.PacketOptions;
import dev.fencing.memberlist.codec.WireLimits;
import dev.fencing.memberlist.transport.InboundStreamLimits;
import dev.fencing.memberlist.transport.Transport;
import java.time.Duration;
import java.util.Objects;

/**
 * Immutable memberlist configuration. Start from {@link #defaultLan()}, {@link #defaultWan()} or {@link #defaultLocal()}
 * (memberlist's DefaultLANConfig / DefaultWANConfig / DefaultLocalConfig, same values, same names) and adjust with
 * {@link #toBuilder()}:
 *
 * <pre>{@code
 * Config c = Config.defaultLocal().toBuilder().name("a").bindAddr("127.0.0.1").bindPort(0).build();
 * }</pre>
 */
public final class Config {
  /** Protocol versions this implementation speaks (memberlist ProtocolVersionMin/Max). */
  public static final int PROTOCOL_VERSION_MIN = 1;

  public static final int PROTOCOL_VERSION_MAX = 5;

  /** memberlist's MetaMaxSize. */
  public static final int META_MAX_SIZE = 512;

  private final String name;
  private final String bindAddr;
  private final int bindPort;
  private final String advertiseAddr;
  private final int advertisePort;
  private final int protocolVersion;
  private final Duration tcpTimeout;
  private final int indirectChecks;
  private final int retransmitMult;
  private final int suspicionMult;
  private final int suspicionMaxTimeoutMult;
  private final Duration pushPullInterval;
  private final Duration probeInterval;
  private final Duration probeTimeout;
  private final boolean disableTcpPings;
  private final int awarenessMaxMultiplier;
  private final Duration gossipInterval;
  private final int gossipNodes;
  private final Duration gossipToTheDeadTime;
  private final boolean gossipVerifyIncoming;
  private final boolean gossipVerifyOutgoing;
  private final boolean enableCompression;
  private final int udpBufferSize;
  private final Duration deadNodeReclaimTime;
  private final boolean lifeguardSuspicion;
  private final String label;
  private final boolean skipInboundLabelCheck;
  private final Keyring keyring;
  private final Delegate delegate;
  private final EventDelegate events;
  private final AliveDelegate aliveDelegate;
  private final java.util.function.Predicate<java.net.InetAddress> acceptFrom;
  private final ConflictDelegate conflictDelegate;
  private final MergeDelegate mergeDelegate;
  private final Transport transport;

  // ---- resource limits against the network (see WireLimits, InboundStreamLimits) ----
  private final int maxStreamMessageBytes;
  private final int maxPushPullNodes;
  private final int maxPushPullStateBytes;
  private final int maxUserStateBytes;
  private final int maxDecompressedBytes;
  private final int maxCompoundParts;
  private final int maxNestingDepth;
  private final int maxInboundStreams;
  private final int maxInboundFrameBytes;
  // ---- end of resource limits ----

  private Config(Builder b) {
    this.name = b.name;
    this.bindAddr = b.bindAddr;
    this.bindPort = b.bindPort;
    this.advertiseAddr = b.advertiseAddr;
    this.advertisePort = b.advertisePort;
    this.protocolVersion = b.protocolVersion;
    this.tcpTimeout = b.tcpTimeout;
    this.indirectChecks = b.indirectChecks;
    this.retransmitMult = b.retransmitMult;
    this.suspicionMult = b.suspicionMult;
    this.suspicionMaxTimeoutMult = b.suspicionMaxTimeoutMult;
    this.pushPullInterval = b.pushPullInterval;
    this.probeInterval = b.probeInterval;
    this.probeTimeout = b.probeTimeout;
    this.disableTcpPings = b.disableTcpPings;
    this.awarenessMaxMultiplier = b.awarenessMaxMultiplier;
    this.gossipInterval = b.gossipInterval;
    this.gossipNodes = b.gossipNodes;
    this.gossipToTheDeadTime = b.gossipToTheDeadTime;
    this.gossipVerifyIncoming = b.gossipVerifyIncoming;
    this.gossipVerifyOutgoing = b.gossipVerifyOutgoing;
    this.enableCompression = b.enableCompression;
    this.udpBufferSize = b.udpBufferSize;
    this.deadNodeReclaimTime = b.deadNodeReclaimTime;
    this.lifeguardSuspicion = b.lifeguardSuspicion;
    this.label = b.label;
    this.skipInboundLabelCheck = b.skipInboundLabelCheck;
    this.keyring = b.keyring;
    this.delegate = b.delegate;
    this.events = b.events;
    this.aliveDelegate = b.aliveDelegate;
    this.acceptFrom = b.acceptFrom;
    this.conflictDelegate = b.conflictDelegate;
    this.mergeDelegate = b.mergeDelegate;
    this.transport = b.transport;
    // resource limits
    this.maxStreamMessageBytes = b.maxStreamMessageBytes;
    this.maxPushPullNodes = b.maxPushPullNodes;
    this.maxPushPullStateBytes = b.maxPushPullStateBytes;
    this.maxUserStateBytes = b.maxUserStateBytes;
    this.maxDecompressedBytes = b.maxDecompressedBytes;
    this.maxCompoundParts = b.maxCompoundParts;
    this.maxNestingDepth = b.maxNestingDepth;
    this.maxInboundStreams = b.maxInboundStreams;
    this.maxInboundFrameBytes = b.maxInboundFrameBytes;
  }

  /** This node's unique name (default: the host name). */
  public String name() {
    return name;
  }

  /** Address to bind UDP and TCP to (default 0.0.0.0). */
  public String bindAddr() {
    return bindAddr;
  }

  /** Port to bind UDP and TCP to; 0 picks a free port (default 7946). */
  public int bindPort() {
    return bindPort;
  }

  /** Address announced to peers; null = the bound address, or a private IP when bound to 0.0.0.0. */
  public String advertiseAddr() {
    return advertiseAddr;
  }

  /** Port announced to peers; 0 = the bound port. */
  public int advertisePort() {
    return advertisePort;
  }

  /** ProtocolVersion spoken (2, memberlist's default; announced as Vsn [1,5,2,…]). */
  public int protocolVersion() {
    return protocolVersion;
  }

  /** TCPTimeout: deadline of a stream exchange (push/pull, reliable message, TCP ping). */
  public Duration tcpTimeout() {
    return tcpTimeout;
  }

  /** IndirectChecks: peers asked to probe a node that did not answer a direct ping. */
  public int indirectChecks() {
    return indirectChecks;
  }

  /** RetransmitMult: a broadcast is sent RetransmitMult × ceil(log10(N+1)) times. */
  public int retransmitMult() {
    return retransmitMult;
  }

  /** SuspicionMult: min suspicion timeout = SuspicionMult × max(1, log10(N)) × ProbeInterval. */
  public int suspicionMult() {
    return suspicionMult;
  }

  /** SuspicionMaxTimeoutMult: max suspicion timeout = this × the min timeout. */
  public int suspicionMaxTimeoutMult() {
    return suspicionMaxTimeoutMult;
  }

  /** PushPullInterval: full state sync period with one random peer (0 disables); scaled above 32 nodes. */
  public Duration pushPullInterval() {
    return pushPullInterval;
  }

  /** ProbeInterval: one failure-detection probe per interval (scaled by awareness). */
  public Duration probeInterval() {
    return probeInterval;
  }

  /** ProbeTimeout: wait for a direct ack before asking IndirectChecks peers. */
  public Duration probeTimeout() {
    return probeTimeout;
  }

  /** DisableTcpPings: do not fall back to a TCP ping when UDP probes fail. */
  public boolean disableTcpPings() {
    return disableTcpPings;
  }

  /** AwarenessMaxMultiplier: Lifeguard's local health multiplier limit (1 disables it). */
  public int awarenessMaxMultiplier() {
    return awarenessMaxMultiplier;
  }

  /** GossipInterval: period of piggyback-free gossip of queued broadcasts (0 disables). */
  public Duration gossipInterval() {
    return gossipInterval;
  }

  /** GossipNodes: random peers gossiped to per GossipInterval. */
  public int gossipNodes() {
    return gossipNodes;
  }

  /** GossipToTheDeadTime: how long dead nodes still receive gossip, and when dead/left nodes are reaped. */
  public Duration gossipToTheDeadTime() {
    return gossipToTheDeadTime;
  }

  /** GossipVerifyIncoming: with a keyring, drop unencrypted input. */
  public boolean gossipVerifyIncoming() {
    return gossipVerifyIncoming;
  }

  /** GossipVerifyOutgoing: with a keyring, encrypt output. */
  public boolean gossipVerifyOutgoing() {
    return gossipVerifyOutgoing;
  }

  /** EnableCompression: LZW-compress outgoing packets and streams. */
  public boolean enableCompression() {
    return enableCompression;
  }

  /** UDPBufferSize: packet budget for piggybacked gossip (bytes). */
  public int udpBufferSize() {
    return udpBufferSize;
  }

  /** DeadNodeReclaimTime: after this a dead node's name may be reclaimed from another address (0 = never). */
  public Duration deadNodeReclaimTime() {
    return deadNodeReclaimTime;
  }

  /** Lifeguard's shrinking suspicion timeout (LHA-Suspicion); false makes min = max, i.e. plain SWIM suspicion. Not a memberlist option: it exists for the Lifeguard on/off experiment. */
  public boolean lifeguardSuspicion() {
    return lifeguardSuspicion;
  }

  /** Label: packet/stream label (memberlist 0.3+); empty = none, required for 0.2.2 peers. */
  public String label() {
    return label;
  }

  /**
   * SkipInboundLabelCheck (memberlist 0.3+): inbound packets and streams must come without a label header (something
   * in front of this node removed it) and count as carrying {@link #label()}, which remains the encryption's
   * associated data; a labelled input is refused. Outbound traffic is labelled as usual. Default false.
   */
  public boolean skipInboundLabelCheck() {
    return skipInboundLabelCheck;
  }

  /** Keyring for AES-GCM gossip encryption; null = no encryption. */
  public Keyring keyring() {
    return keyring;
  }

  /** Application hooks: meta, user messages, broadcasts, push/pull state (null = none). */
  public Delegate delegate() {
    return delegate;
  }

  /** Membership event notifications (null = none). */
  public EventDelegate events() {
    return events;
  }

  /** Filter for alive messages (null = accept all). */
  public AliveDelegate aliveDelegate() {
    return aliveDelegate;
  }

  /**
   * Source addresses whose datagrams the transport this node binds reads at all (null = any). Everything else is
   * dropped before any decryption or decoding, so a host that is not a member cannot spend the receive thread's time
   * on packets it cannot seal. Streams are not filtered (a dialer's source address is the kernel's choice). Not Go
   * memberlist's: its nodes take any source.
   */
  public java.util.function.Predicate<java.net.InetAddress> acceptFrom() {
    return acceptFrom;
  }

  /** Told about name conflicts (null = log only). */
  public ConflictDelegate conflictDelegate() {
    return conflictDelegate;
  }

  /** Vets joins (null = accept all). */
  public MergeDelegate mergeDelegate() {
    return mergeDelegate;
  }

  /** A transport to use instead of binding the NIO UDP+TCP transport (e.g. the simulator's). */
  public Transport transport() {
    return transport;
  }

  // ---- resource limits against the network ----

  /**
   * Wire bytes of one TCP stream message, in either direction: an encrypted frame announcing more is refused from its
   * header, a plain or compressed one stops being read there (default 1 MiB).
   */
  public int maxStreamMessageBytes() {
    return maxStreamMessageBytes;
  }

  /** Node states one push/pull may declare (default 4096). */
  public int maxPushPullNodes() {
    return maxPushPullNodes;
  }

  /** Decoded bytes of one push/pull: header, node states and user state (default 1 MiB). */
  public int maxPushPullStateBytes() {
    return maxPushPullStateBytes;
  }

  /** User state in one push/pull, and one reliable user message (default 256 KiB). */
  public int maxUserStateBytes() {
    return maxUserStateBytes;
  }

  /** LZW output of one packet or stream message, summed over all its compressed layers (default 1 MiB). */
  public int maxDecompressedBytes() {
    return maxDecompressedBytes;
  }

  /** Compound parts in one packet, summed over all its compound layers (default 512). */
  public int maxCompoundParts() {
    return maxCompoundParts;
  }

  /** Compound and compressed layers nested in one packet (default 4; Go sends 2). */
  public int maxNestingDepth() {
    return maxNestingDepth;
  }

  /**
   * Inbound TCP streams open at once; more are closed at their accept (default 16). Each inbound stream is closed
   * {@link #tcpTimeout()} after its accept however slowly it sends. Applies to the NIO transport this configuration
   * binds, not to a {@link #transport()} supplied by the caller.
   */
  public int maxInboundStreams() {
    return maxInboundStreams;
  }

  /**
   * Bytes of encrypted inbound stream frames held in memory at once over all inbound streams, from a frame's 5-byte
   * header until it is decrypted and decoded (default 4 MiB; at least {@link #maxStreamMessageBytes()}). A frame that
   * does not fit closes the stream holding the oldest reservation, and is refused if no room frees within a second.
   * Applies to the NIO transport this configuration binds, like {@link #maxInboundStreams()}.
   */
  public int maxInboundFrameBytes() {
    return maxInboundFrameBytes;
  }

  /** The codec caps this configuration sets. */
  public WireLimits wireLimits() {
    return new WireLimits(
        maxStreamMessageBytes,
        maxPushPullNodes,
        maxPushPullStateBytes,
        maxUserStateBytes,
        maxDecompressedBytes,
        maxCompoundParts,
        maxNestingDepth);
  }

  /** The inbound stream caps of the NIO transport: {@link #maxInboundStreams()}, each open at most {@link #tcpTimeout()}. */
  public InboundStreamLimits inboundStreamLimits() {
    return new InboundStreamLimits(maxInboundStreams, tcpTimeout, maxInboundFrameBytes);
  }

  // ---- end of resource limits ----

  /** True when a keyring with at least one key is configured. */
  public boolean encryptionEnabled() {
    return keyring != null && !keyring.keys().isEmpty();
  }

  /** The codec settings this configuration implies (keyring, label, verification, encryption version). */
  public PacketOptions packetOptions() {
    return new PacketOptions(
        keyring,
        label,
        gossipVerifyIncoming,
        gossipVerifyOutgoing,
        protocolVersion < 2 ? Keyring.VERSION_0 : Keyring.VERSION_1,
        skipInboundLabelCheck);
  }

  /** The 6-byte Vsn announced in alive messages and push/pull: [PMin, PMax, PCur, DMin, DMax, DCur]. */
  public byte[] vsn() {
    return new byte[] {PROTOCOL_VERSION_MIN, PROTOCOL_VERSION_MAX, (byte) protocolVersion, 0, 0, 0};
  }

  /** A builder holding this configuration's values. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.name = name;
    b.bindAddr = bindAddr;
    b.bindPort = bindPort;
    b.advertiseAddr = advertiseAddr;
    b.advertisePort = advertisePort;
    b.protocolVersion = protocolVersion;
    b.tcpTimeout = tcpTimeout;
    b.indirectChecks = indirectChecks;
    b.retransmitMult = retransmitMult;
    b.suspicionMult = suspicionMult;
    b.suspicionMaxTimeoutMult = suspicionMaxTimeoutMult;
    b.pushPullInterval = pushPullInterval;
    b.probeInterval = probeInterval;
    b.probeTimeout = probeTimeout;
    b.disableTcpPings = disableTcpPings;
    b.awarenessMaxMultiplier = awarenessMaxMultiplier;
    b.gossipInterval = gossipInterval;
    b.gossipNodes = gossipNodes;
    b.gossipToTheDeadTime = gossipToTheDeadTime;
    b.gossipVerifyIncoming = gossipVerifyIncoming;
    b.gossipVerifyOutgoing = gossipVerifyOutgoing;
    b.enableCompression = enableCompression;
    b.udpBufferSize = udpBufferSize;
    b.deadNodeReclaimTime = deadNodeReclaimTime;
    b.lifeguardSuspicion = lifeguardSuspicion;
    b.label = label;
    b.skipInboundLabelCheck = skipInboundLabelCheck;
    b.keyring = keyring;
    b.delegate = delegate;
    b.events = events;
    b.aliveDelegate = aliveDelegate;
    b.acceptFrom = acceptFrom;
    b.conflictDelegate = conflictDelegate;
    b.mergeDelegate = mergeDelegate;
    b.transport = transport;
    // resource limits
    b.maxStreamMessageBytes = maxStreamMessageBytes;
    b.maxPushPullNodes = maxPushPullNodes;
    b.maxPushPullStateBytes = maxPushPullStateBytes;
    b.maxUserStateBytes = maxUserStateBytes;
    b.maxDecompressedBytes = maxDecompressedBytes;
    b.maxCompoundParts = maxCompoundParts;
    b.maxNestingDepth = maxNestingDepth;
    b.maxInboundStreams = maxInboundStreams;
    b.maxInboundFrameBytes = maxInboundFrameBytes;
    return b;
  }

  /** memberlist's DefaultLANConfig: a LAN, everyone in one network. */
  public static Config defaultLan() {
    Builder b = new Builder();
    b.name = localHostName();
    b.bindAddr = "0.0.0.0";
    b.bindPort = 7946;
    b.advertiseAddr = null;
    b.advertisePort = 0;
    b.protocolVersion = 2;
    b.tcpTimeout = Duration.ofSeconds(10);
    b.indirectChecks = 3;
    b.retransmitMult = 4;
    b.suspicionMult = 4;
    b.suspicionMaxTimeoutMult = 6;
    b.pushPullInterval = Duration.ofSeconds(30);
    b.probeTimeout = Duration.ofMillis(500);
    b.probeInterval = Duration.ofSeconds(1);
    b.disableTcpPings = false;
    b.awarenessMaxMultiplier = 8;
    b.gossipNodes = 3;
    b.gossipInterval = Duration.ofMillis(200);
    b.gossipToTheDeadTime = Duration.ofSeconds(30);
    b.gossipVerifyIncoming = true;
    b.gossipVerifyOutgoing = true;
    b.enableCompression = true;
    b.udpBufferSize = 1400;
    b.deadNodeReclaimTime = Duration.ZERO;
    b.lifeguardSuspicion = true;
    b.label = "";
    // resource limits
    b.maxStreamMessageBytes = WireLimits.DEFAULT_MAX_STREAM_MESSAGE_BYTES;
    b.maxPushPullNodes = WireLimits.DEFAULT_MAX_PUSH_PULL_NODES;
    b.maxPushPullStateBytes = WireLimits.DEFAULT_MAX_PUSH_PULL_STATE_BYTES;
    b.maxUserStateBytes = WireLimits.DEFAULT_MAX_USER_STATE_BYTES;
    b.maxDecompressedBytes = WireLimits.DEFAULT_MAX_DECOMPRESSED_BYTES;
    b.maxCompoundParts = WireLimits.DEFAULT_MAX_COMPOUND_PARTS;
    b.maxNestingDepth = WireLimits.DEFAULT_MAX_NESTING_DEPTH;
    b.maxInboundStreams = InboundStreamLimits.DEFAULT_MAX_INBOUND_STREAMS;
    b.maxInboundFrameBytes = InboundStreamLimits.DEFAULT_MAX_INBOUND_FRAME_BYTES;
    return b.build();
  }

  /** memberlist's DefaultWANConfig: higher latency, more loss. */
  public static Config defaultWan() {
    return defaultLan().toBuilder()
        .tcpTimeout(Duration.ofSeconds(30))
        .suspicionMult(6)
        .pushPullInterval(Duration.ofSeconds(60))
        .probeTimeout(Duration.ofSeconds(3))
        .probeInterval(Duration.ofSeconds(5))
        .gossipNodes(4)
        .gossipInterval(Duration.ofMillis(500))
        .gossipToTheDeadTime(Duration.ofSeconds(60))
        .build();
  }

  /** memberlist's DefaultLocalConfig: loopback or a very fast network, quick detection. */
  public static Config defaultLocal() {
    return defaultLan().toBuilder()
        .tcpTimeout(Duration.ofSeconds(1))
        .indirectChecks(1)
        .retransmitMult(2)
        .suspicionMult(3)
        .pushPullInterval(Duration.ofSeconds(15))
        .probeTimeout(Duration.ofMillis(200))
        .probeInterval(Duration.ofSeconds(1))
        .gossipInterval(Duration.ofMillis(100))
        .gossipToTheDeadTime(Duration.ofSeconds(15))
        .build();
  }

  private static String localHostName() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      return "localhost";
    }
  }

  /** Mutable builder; {@link #build()} validates and freezes. */
  public static final class Builder {
    private String name;
    private String bindAddr;
    private int bindPort;
    private String advertiseAddr;
    private int advertisePort;
    private int protocolVersion;
    private Duration tcpTimeout;
    private int indirectChecks;
    private int retransmitMult;
    private int suspicionMult;
    private int suspicionMaxTimeoutMult;
    private Duration pushPullInterval;
    private Duration probeInterval;
    private Duration probeTimeout;
    private boolean disableTcpPings;
    private int awarenessMaxMultiplier;
    private Duration gossipInterval;
    private int gossipNodes;
    private Duration gossipToTheDeadTime;
    private boolean gossipVerifyIncoming;
    private boolean gossipVerifyOutgoing;
    private boolean enableCompression;
    private int udpBufferSize;
    private Duration deadNodeReclaimTime;
    private boolean lifeguardSuspicion;
    private String label;
    private boolean skipInboundLabelCheck;
    private Keyring keyring;
    private Delegate delegate;
    private EventDelegate events;
    private AliveDelegate aliveDelegate;
    private java.util.function.Predicate<java.net.InetAddress> acceptFrom;
    private ConflictDelegate conflictDelegate;
    private MergeDelegate mergeDelegate;
    private Transport transport;
    // resource limits
    private int maxStreamMessageBytes;
    private int maxPushPullNodes;
    private int maxPushPullStateBytes;
    private int maxUserStateBytes;
    private int maxDecompressedBytes;
    private int maxCompoundParts;
    private int maxNestingDepth;
    private int maxInboundStreams;
    private int maxInboundFrameBytes;

    private Builder() {}

    /** @see Config#name() */
    public Builder name(String value) {
      this.name = value;
      return this;
    }

    /** @see Config#bindAddr() */
    public Builder bindAddr(String value) {
      this.bindAddr = value;
      return this;
    }

    /** @see Config#bindPort() */
    public Builder bindPort(int value) {
      this.bindPort = value;
      return this;
    }

    /** @see Config#advertiseAddr() */
    public Builder advertiseAddr(String value) {
      this.advertiseAddr = value;
      return this;
    }

    /** @see Config#advertisePort() */
    public Builder advertisePort(int value) {
      this.advertisePort = value;
      return this;
    }

    /** @see Config#protocolVersion() */
    public Builder protocolVersion(int value) {
      this.protocolVersion = value;
      return this;
    }

    /** @see Config#tcpTimeout() */
    public Builder tcpTimeout(Duration value) {
      this.tcpTimeout = value;
      return this;
    }

    /** @see Config#indirectChecks() */
    public Builder indirectChecks(int value) {
      this.indirectChecks = value;
      return this;
    }

    /** @see Config#retransmitMult() */
    public Builder retransmitMult(int value) {
      this.retransmitMult = value;
      return this;
    }

    /** @see Config#suspicionMult() */
    public Builder suspicionMult(int value) {
      this.suspicionMult = value;
      return this;
    }

    /** @see Config#suspicionMaxTimeoutMult() */
    public Builder suspicionMaxTimeoutMult(int value) {
      this.suspicionMaxTimeoutMult = value;
      return this;
    }

    /** @see Config#pushPullInterval() */
    public Builder pushPullInterval(Duration value) {
      this.pushPullInterval = value;
      return this;
    }

    /** @see Config#probeInterval() */
    public Builder probeInterval(Duration value) {
      this.probeInterval = value;
      return this;
    }

    /** @see Config#probeTimeout() */
    public Builder probeTimeout(Duration value) {
      this.probeTimeout = value;
      return this;
    }

    /** @see Config#disableTcpPings() */
    public Builder disableTcpPings(boolean value) {
      this.disableTcpPings = value;
      return this;
    }

    /** @see Config#awarenessMaxMultiplier() */
    public Builder awarenessMaxMultiplier(int value) {
      this.awarenessMaxMultiplier = value;
      return this;
    }

    /** @see Config#gossipInterval() */
    public Builder gossipInterval(Duration value) {
      this.gossipInterval = value;
      return this;
    }

    /** @see Config#gossipNodes() */
    public Builder gossipNodes(int value) {
      this.gossipNodes = value;
      return this;
    }

    /** @see Config#gossipToTheDeadTime() */
    public Builder gossipToTheDeadTime(Duration value) {
      this.gossipToTheDeadTime = value;
      return this;
    }

    /** @see Config#gossipVerifyIncoming() */
    public Builder gossipVerifyIncoming(boolean value) {
      this.gossipVerifyIncoming = value;
      return this;
    }

    /** @see Config#gossipVerifyOutgoing() */
    public Builder gossipVerifyOutgoing(boolean value) {
      this.gossipVerifyOutgoing = value;
      return this;
    }

    /** @see Config#enableCompression() */
    public Builder enableCompression(boolean value) {
      this.enableCompression = value;
      return this;
    }

    /** @see Config#udpBufferSize() */
    public Builder udpBufferSize(int value) {
      this.udpBufferSize = value;
      return this;
    }

    /** @see Config#deadNodeReclaimTime() */
    public Builder deadNodeReclaimTime(Duration value) {
      this.deadNodeReclaimTime = value;
      return this;
    }

    /** @see Config#lifeguardSuspicion() */
    public Builder lifeguardSuspicion(boolean value) {
      this.lifeguardSuspicion = value;
      return this;
    }

    /** @see Config#label() */
    public Builder label(String value) {
      this.label = value;
      return this;
    }

    /** @see Config#skipInboundLabelCheck() */
    public Builder skipInboundLabelCheck(boolean value) {
      this.skipInboundLabelCheck = value;
      return this;
    }

    /** @see Config#keyring() */
    public Builder keyring(Keyring value) {
      this.keyring = value;
      return this;
    }

    /** @see Config#delegate() */
    public Builder delegate(Delegate value) {
      this.delegate = value;
      return this;
    }

    /** @see Config#events() */
    public Builder events(EventDelegate value) {
      this.events = value;
      return this;
    }

    /** @see Config#aliveDelegate() */
    public Builder aliveDelegate(AliveDelegate value) {
      this.aliveDelegate = value;
      return this;
    }

    /** @see Config#acceptFrom() */
    public Builder acceptFrom(java.util.function.Predicate<java.net.InetAddress> value) {
      this.acceptFrom = value;
      return this;
    }

    /** @see Config#conflictDelegate() */
    public Builder conflictDelegate(ConflictDelegate value) {
      this.conflictDelegate = value;
      return this;
    }

    /** @see Config#mergeDelegate() */
    public Builder mergeDelegate(MergeDelegate value) {
      this.mergeDelegate = value;
      return this;
    }

    /** @see Config#transport() */
    public Builder transport(Transport value) {
      this.transport = value;
      return this;
    }

    // ---- resource limits against the network ----

    /** @see Config#maxStreamMessageBytes() */
    public Builder maxStreamMessageBytes(int value) {
      this.maxStreamMessageBytes = value;
      return this;
    }

    /** @see Config#maxPushPullNodes() */
    public Builder maxPushPullNodes(int value) {
      this.maxPushPullNodes = value;
      return this;
    }

    /** @see Config#maxPushPullStateBytes() */
    public Builder maxPushPullStateBytes(int value) {
      this.maxPushPullStateBytes = value;
      return this;
    }

    /** @see Config#maxUserStateBytes() */
    public Builder maxUserStateBytes(int value) {
      this.maxUserStateBytes = value;
      return this;
    }

    /** @see Config#maxDecompressedBytes() */
    public Builder maxDecompressedBytes(int value) {
      this.maxDecompressedBytes = value;
      return this;
    }

    /** @see Config#maxCompoundParts() */
    public Builder maxCompoundParts(int value) {
      this.maxCompoundParts = value;
      return this;
    }

    /** @see Config#maxNestingDepth() */
    public Builder maxNestingDepth(int value) {
      this.maxNestingDepth = value;
      return this;
    }

    /** @see Config#maxInboundStreams() */
    public Builder maxInboundStreams(int value) {
      this.maxInboundStreams = value;
      return this;
    }

    /** @see Config#maxInboundFrameBytes() */
    public Builder maxInboundFrameBytes(int value) {
      this.maxInboundFrameBytes = value;
      return this;
    }

    // ---- end of resource limits ----

    /** Validates and returns the immutable configuration. */
    public Config build() {
      Objects.requireNonNull(name, "name");
      if (name.isEmpty()) {
        throw new IllegalArgumentException("name must not be empty");
      }
      Objects.requireNonNull(bindAddr, "bindAddr");
      Objects.requireNonNull(label, "label (use \"\" for none)");
      if (label.length() > 255) {
        throw new IllegalArgumentException("label must be at most 255 bytes, was " + label.length());
      }
      if (protocolVersion < PROTOCOL_VERSION_MIN || protocolVersion > PROTOCOL_VERSION_MAX) {
        throw new IllegalArgumentException("protocolVersion must be 1..5, was " + protocolVersion);
      }
      requirePositive(probeInterval, "probeInterval");
      requirePositive(probeTimeout, "probeTimeout");
      requirePositive(tcpTimeout, "tcpTimeout");
      Objects.requireNonNull(pushPullInterval, "pushPullInterval");
      Objects.requireNonNull(gossipInterval, "gossipInterval");
      Objects.requireNonNull(gossipToTheDeadTime, "gossipToTheDeadTime");
      Objects.requireNonNull(deadNodeReclaimTime, "deadNodeReclaimTime");
      if (awarenessMaxMultiplier < 1) {
        throw new IllegalArgumentException("awarenessMaxMultiplier must be >= 1, was " + awarenessMaxMultiplier);
      }
      if (suspicionMult < 1 || suspicionMaxTimeoutMult < 1 || retransmitMult < 1) {
        throw new IllegalArgumentException("suspicionMult, suspicionMaxTimeoutMult and retransmitMult must be >= 1");
      }
      if (bindPort < 0 || bindPort > 65535 || advertisePort < 0 || advertisePort > 65535) {
        throw new IllegalArgumentException("ports must be 0..65535");
      }
      Config config = new Config(this);
      // resource limits: the record constructors say which one is out of range
      config.wireLimits();
      config.inboundStreamLimits();
      if (maxInboundFrameBytes < maxStreamMessageBytes) {
        throw new IllegalArgumentException("maxInboundFrameBytes (" + maxInboundFrameBytes + ") must be at least"
            + " maxStreamMessageBytes (" + maxStreamMessageBytes + "): a frame of that size would never fit");
      }
      return config;
    }

    private static void requirePositive(Duration d, String what) {
      if (d == null || d.isZero() || d.isNegative()) {
        throw new IllegalArgumentException(what + " must be > 0, was " + d);
      }
    }
  }
}
