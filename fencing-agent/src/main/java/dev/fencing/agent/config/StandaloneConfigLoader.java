package dev.fencing.agent.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.fencing.agent.apiserver.ApiServerEndpoint;
import dev.fencing.agent.membership.NodeMeta;
import dev.fencing.policy.DiskSpec;
import dev.fencing.policy.DurationFormat;
import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.GossipLabel;
import dev.fencing.policy.FencingSpecReader;
import dev.fencing.policy.GossipNetworks;
import dev.fencing.policy.Mode;
import dev.fencing.policy.NetworkCidr;
import dev.fencing.policy.PolicyResolver;
import dev.fencing.policy.Profile;
import dev.fencing.policy.QuorumLossAction;
import dev.fencing.policy.TieBreakerKind;
import dev.fencing.policy.TimingOverrides;
import dev.fencing.policy.Violation;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Reads a standalone agent file:
 *
 * <pre>
 * group: workers
 * expected:
 *   - name: node-a
 *     address: 10.0.0.5:7946          # gossip host:port
 *     addresses: {InternalIP: 10.0.0.5}
 *     gossipAddresses: {10.1.0.0/24: 10.1.0.5:7946}   # per network of fencing.networks (optional when the
 *                                     # address above lies inside the network)
 * fencing:                            # the same fields as NodeGroup spec.fencing
 *   mode: Watchdog
 *   watchdog: {timeout: 60s}
 *   quorumLossAction: Fence
 *   profile: Auto
 *   quorum: {size: Auto, tieBreakers: [LowestName]}
 *   timings: {quorumWindow: 2s}
 *   gossipLabel: GroupName            # or None: no memberlist label (peers on Go memberlist before v0.3.0)
 *   networks: [10.0.0.0/24, 10.1.0.0/24]   # optional: one gossip member and heartbeat per network
 *   reachability: Any                 # Any | All
 * gossip:
 *   keys: [base64 AES key, ...]       # optional; first is the primary
 * apiServerProbe:                     # optional; where APIReachable probes GET url/readyz
 *   url: https://10.96.0.1:443
 *   caFile: /path/ca.crt              # optional; default the pod's service-account CA
 * </pre>
 *
 * Every problem is collected and reported together, each with its place (line and column for syntax and type errors,
 * the field path always) and what to change.
 */
public final class StandaloneConfigLoader {

  private static final Pattern GROUP_NAME = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?");

  /** The file's shape; unknown fields are errors so a typo never silently drops a setting. */
  record FileDto(String group, List<MemberDto> expected, FencingDto fencing, GossipDto gossip,
      ApiServerProbeDto apiServerProbe) {}

  record ApiServerProbeDto(String url, String caFile) {}

  record MemberDto(String name, String address, Map<String, String> addresses, Map<String, String> gossipAddresses) {}

  record FencingDto(String mode, WatchdogDto watchdog, String quorumLossAction, String profile, QuorumDto quorum,
      TimingsDto timings, String gossipLabel, List<String> networks, String reachability, DiskDto disk) {}

  record DiskDto(String device, Boolean required, String ioTimeout) {}

  record WatchdogDto(String timeout) {}

  record QuorumDto(JsonNode size, List<String> tieBreakers) {}

  record TimingsDto(String probeInterval, String probeTimeout, Integer suspicionMult, Integer suspicionMaxTimeoutMult,
      String gossipInterval, Integer gossipNodes, Integer retransmitMult, String pushPullInterval,
      String heartbeatInterval, String quorumWindow, Double localHealthCap, String evaluationTick,
      String feedInterval, String armingDelay, String fenceMargin) {}

  record GossipDto(List<String> keys) {}

  private static final YAMLMapper MAPPER = YAMLMapper.builder()
      .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
      .build();

  private StandaloneConfigLoader() {}

  /** Reads and validates {@code file}. */
  public static StandaloneConfig load(Path file) throws ConfigException {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ConfigException(file.toString(), List.of("cannot read the file: " + e.getMessage()));
    }
    return parse(file.toString(), text);
  }

  /** Parses and validates YAML {@code text}; {@code source} names it in messages. */
  public static StandaloneConfig parse(String source, String text) throws ConfigException {
    FileDto dto;
    try {
      dto = MAPPER.readValue(text, FileDto.class);
    } catch (JsonProcessingException e) {
      throw new ConfigException(source, List.of(describe(e, text)));
    }
    if (dto == null) {
      throw new ConfigException(source, List.of("the file is empty; it needs group, expected and fencing"));
    }
    List<String> problems = new ArrayList<>();
    if (dto.group() == null || dto.group().isBlank()) {
      problems.add("group: missing; name the group, e.g. group: workers");
    } else if (!GROUP_NAME.matcher(dto.group()).matches()) {
      problems.add("group: '" + dto.group() + "' must be a lowercase DNS-style name (a-z, 0-9, '-', '.')");
    }
    List<ExpectedMember> members = members(dto.expected(), problems);
    FencingSpec spec = fencing(dto.fencing(), problems);
    checkNetworkAddresses(members, spec, problems);
    List<byte[]> keys = keys(dto.gossip(), problems);
    Optional<ApiServerEndpoint> probe = apiServerProbe(dto.apiServerProbe(), problems);
    if (!problems.isEmpty()) {
      throw new ConfigException(source, withLines(problems, text));
    }
    List<Violation> violations = PolicyResolver.validate(spec, members.size());
    if (!violations.isEmpty()) {
      throw new ConfigException(source, withLines(violations.stream()
          .map(v -> v.field().replaceFirst("^spec\\.", "") + ": " + v.message()).toList(), text));
    }
    return new StandaloneConfig(dto.group(), members, spec, PolicyResolver.resolve(spec, members.size()), keys,
        PolicyResolver.warnings(spec, members.size()), probe);
  }

  private static Optional<ApiServerEndpoint> apiServerProbe(ApiServerProbeDto dto, List<String> problems) {
    if (dto == null) {
      return Optional.empty();
    }
    if (dto.url() == null || dto.url().isBlank()) {
      problems.add("apiServerProbe.url: missing; the API server's base URL, e.g. https://10.96.0.1:443");
      return Optional.empty();
    }
    try {
      Path ca = dto.caFile() == null ? ApiServerEndpoint.SERVICE_ACCOUNT_CA : Path.of(dto.caFile());
      return Optional.of(new ApiServerEndpoint(ApiServerEndpoint.parseUrl(dto.url().trim()), Optional.empty(), ca));
    } catch (IllegalArgumentException e) {
      problems.add("apiServerProbe.url: " + e.getMessage());
      return Optional.empty();
    }
  }

  private static List<ExpectedMember> members(List<MemberDto> expected, List<String> problems) {
    List<ExpectedMember> members = new ArrayList<>();
    if (expected == null || expected.isEmpty()) {
      problems.add("expected: missing; list every member of the group with name and address (host:port)");
      return members;
    }
    Set<String> names = new HashSet<>();
    Set<String> addresses = new HashSet<>();
    for (int i = 0; i < expected.size(); i++) {
      MemberDto m = expected.get(i);
      String at = "expected[" + i + "]";
      if (m == null) {
        problems.add(at + ": empty entry; write {name: ..., address: host:port}");
        continue;
      }
      if (m.name() == null || m.name().isBlank()) {
        problems.add(at + ".name: missing; use the node's name");
        continue;
      }
      if (m.name().getBytes(StandardCharsets.UTF_8).length > 253) {
        problems.add(at + ".name: longer than 253 bytes");
        continue;
      }
      if (!names.add(m.name())) {
        problems.add(at + ".name: '" + m.name() + "' is listed twice; every member needs a unique name");
        continue;
      }
      try {
        ExpectedMember member = ExpectedMember.parse(m.name(), m.address(), m.addresses())
            .withGossipAddresses(m.gossipAddresses() == null ? Map.of() : m.gossipAddresses());
        if (!addresses.add(member.gossipAddress())) {
          problems.add(at + ".address: " + member.gossipAddress() + " is used by two members");
        }
        int metaBytes = new NodeMeta(member.addresses(), false).encode().length;
        if (metaBytes > NodeMeta.MAX_BYTES) {
          problems.add(at + ".addresses: encode to " + metaBytes + " bytes, more than gossip metadata allows ("
              + NodeMeta.MAX_BYTES + "); list fewer networks or shorter names");
        }
        members.add(member);
      } catch (IllegalArgumentException e) {
        problems.add(at + ".address: " + e.getMessage());
      }
    }
    members.sort(Comparator.comparing(ExpectedMember::name));
    return members;
  }

  private static FencingSpec fencing(FencingDto f, List<String> problems) {
    if (f == null) {
      return FencingSpec.DEFAULTS;
    }
    Mode mode = parse(f.mode(), "fencing.mode", Mode::parse, problems);
    Duration timeout = f.watchdog() == null ? null
        : parse(f.watchdog().timeout(), "fencing.watchdog.timeout", DurationFormat::parseWholeUnit, problems);
    QuorumLossAction action = parse(f.quorumLossAction(), "fencing.quorumLossAction", QuorumLossAction::parse,
        problems);
    Profile profile = parse(f.profile(), "fencing.profile", Profile::parse, problems);
    Integer size = null;
    List<TieBreakerKind> tieBreakers = null;
    if (f.quorum() != null) {
      JsonNode s = f.quorum().size();
      if (s != null && !s.isNull()) {
        if (s.isInt() && s.intValue() > 0) {
          size = s.intValue();
        } else if (!(s.isTextual() && s.textValue().equals("Auto"))) {
          problems.add("fencing.quorum.size: '" + s.asText() + "' must be Auto or a positive integer");
        }
      }
      if (f.quorum().tieBreakers() != null) {
        tieBreakers = new ArrayList<>();
        for (int i = 0; i < f.quorum().tieBreakers().size(); i++) {
          tieBreakers.add(parse(f.quorum().tieBreakers().get(i), "fencing.quorum.tieBreakers[" + i + "]",
              TieBreakerKind::parse, problems));
        }
      }
    }
    TimingOverrides overrides = timings(f.timings(), problems);
    GossipLabel gossipLabel = parse(f.gossipLabel(), "fencing.gossipLabel", GossipLabel::parse, problems);
    DiskSpec disk = f.disk() == null ? null : new DiskSpec(f.disk().device(), f.disk().required(),
        f.disk().ioTimeout() == null ? null
            : parse(f.disk().ioTimeout(), "fencing.disk.ioTimeout", DurationFormat::parse, problems));
    return FencingSpec.builder().mode(mode).watchdogTimeout(timeout).quorumLossAction(action).profile(profile)
        .quorumSize(size).tieBreakers(tieBreakers).timings(overrides).gossipLabel(gossipLabel)
        .networks(networks(f, problems)).disk(disk).build();
  }

  /** The same reader as the NodeGroup's, so both say the same about a bad network. */
  private static GossipNetworks networks(FencingDto f, List<String> problems) {
    if (f.networks() == null && f.reachability() == null) {
      return null;
    }
    Map<String, Object> block = new java.util.LinkedHashMap<>();
    if (f.networks() != null) {
      block.put("networks", f.networks());
    }
    if (f.reachability() != null) {
      block.put("reachability", f.reachability());
    }
    FencingSpecReader.Result read = FencingSpecReader.read(block, "fencing");
    read.violations().forEach(v -> problems.add(v.field() + ": " + v.message()));
    return read.valid() ? read.spec().networks() : null;
  }

  /**
   * Every member needs an address inside every network (its gossipAddresses entry, or its address when that lies
   * inside), and an entry only for a network of the group.
   */
  private static void checkNetworkAddresses(List<ExpectedMember> members, FencingSpec spec, List<String> problems) {
    GossipNetworks networks = spec.effectiveNetworks();
    for (int i = 0; i < members.size(); i++) {
      ExpectedMember m = members.get(i);
      String at = "expected[" + i + "].gossipAddresses";
      for (Map.Entry<String, String> e : m.gossipAddresses().entrySet()) {
        Optional<NetworkCidr> cidr = networks.cidrs().stream().filter(c -> c.text().equals(e.getKey())).findFirst();
        if (cidr.isEmpty()) {
          problems.add(at + ": '" + e.getKey() + "' is not one of fencing.networks " + networks.texts()
              + "; write the network exactly as listed there");
          continue;
        }
        try {
          HostPort hp = HostPort.parse(e.getValue(), true);
          if (!cidr.get().containsLiteral(hp.host())) {
            problems.add(at + ": " + e.getValue() + " (member " + m.name() + ") is not an IP inside " + e.getKey());
          }
        } catch (IllegalArgumentException ex) {
          problems.add(at + ": " + ex.getMessage());
        }
      }
      for (NetworkCidr cidr : networks.cidrs()) {
        if (!m.gossipAddresses().containsKey(cidr.text()) && !cidr.containsLiteral(m.host())) {
          problems.add(at + ": member " + m.name() + " has no address on network " + cidr.text()
              + "; add '" + cidr.text() + ": <ip inside it>:<port>'");
        }
      }
    }
  }

  private static TimingOverrides timings(TimingsDto t, List<String> problems) {
    if (t == null) {
      return null;
    }
    Function<String, Duration> d = DurationFormat::parse;
    String at = "fencing.timings.";
    return new TimingOverrides(
        parse(t.probeInterval(), at + "probeInterval", d, problems),
        parse(t.probeTimeout(), at + "probeTimeout", d, problems),
        t.suspicionMult(), t.suspicionMaxTimeoutMult(),
        parse(t.gossipInterval(), at + "gossipInterval", d, problems),
        t.gossipNodes(), t.retransmitMult(),
        parse(t.pushPullInterval(), at + "pushPullInterval", d, problems),
        parse(t.heartbeatInterval(), at + "heartbeatInterval", d, problems),
        parse(t.quorumWindow(), at + "quorumWindow", d, problems),
        t.localHealthCap(),
        parse(t.evaluationTick(), at + "evaluationTick", d, problems),
        parse(t.feedInterval(), at + "feedInterval", d, problems),
        parse(t.armingDelay(), at + "armingDelay", d, problems),
        parse(t.fenceMargin(), at + "fenceMargin", d, problems));
  }

  private static List<byte[]> keys(GossipDto gossip, List<String> problems) {
    List<byte[]> keys = new ArrayList<>();
    if (gossip == null || gossip.keys() == null) {
      return keys;
    }
    for (int i = 0; i < gossip.keys().size(); i++) {
      String at = "gossip.keys[" + i + "]";
      try {
        byte[] key = Base64.getDecoder().decode(String.valueOf(gossip.keys().get(i)).trim());
        if (key.length != 16 && key.length != 24 && key.length != 32) {
          problems.add(at + ": decodes to " + key.length + " bytes; an AES key is 16, 24 or 32 bytes"
              + " (e.g. head -c 32 /dev/urandom | base64)");
        } else {
          keys.add(key);
        }
      } catch (IllegalArgumentException e) {
        problems.add(at + ": not base64 (" + e.getMessage() + ")");
      }
    }
    return keys;
  }

  private static <T> T parse(String value, String field, Function<String, T> parser, List<String> problems) {
    if (value == null) {
      return null;
    }
    try {
      return parser.apply(value);
    } catch (IllegalArgumentException e) {
      problems.add(field + ": " + e.getMessage());
      return null;
    }
  }

  private static String describe(JsonProcessingException e, String text) {
    JsonLocation where = e.getLocation();
    String place = where == null ? "" : "line " + where.getLineNr() + ", column " + where.getColumnNr() + ": ";
    if (e instanceof UnrecognizedPropertyException u) {
      String field = path(u);
      return withLine(field + ": unknown field '" + u.getPropertyName() + "'; known fields here: "
          + u.getKnownPropertyIds(), text, place);
    }
    if (e instanceof JsonMappingException m && !m.getPath().isEmpty()) {
      return withLine(path(m) + ": " + m.getOriginalMessage().split("\n")[0], text, place);
    }
    return place + e.getOriginalMessage().split("\n")[0];
  }

  private static List<String> withLines(List<String> problems, String text) {
    return problems.stream().map(p -> withLine(p, text, "")).toList();
  }

  /**
   * Prefixes a "field.path: message" problem with the line the field is on. Jackson reports record errors at the
   * end of the enclosing mapping, so the line is found by walking the path through the text: a key is the next line
   * holding {@code key:} and an index {@code [i]} the i+1-th sequence entry after it.
   */
  private static String withLine(String problem, String text, String fallback) {
    int colon = problem.indexOf(": ");
    if (colon < 0) {
      return fallback + problem;
    }
    String[] lines = text.split("\n", -1);
    int line = 0;
    boolean found = true;
    for (String segment : problem.substring(0, colon).split("\\.")) {
      String key = segment.contains("[") ? segment.substring(0, segment.indexOf('[')) : segment;
      line = findKey(lines, line, key);
      if (line < 0) {
        found = false;
        break;
      }
      int keyLine = line;
      java.util.regex.Matcher index = INDEX.matcher(segment);
      while (index.find() && line >= 0) {
        line = findEntry(lines, line + 1, Integer.parseInt(index.group(1)));
      }
      if (line < 0) {
        // A flow sequence ([a, b]) has no entry lines: point at its key.
        line = keyLine;
        break;
      }
    }
    return (found ? "line " + (line + 1) + ": " : fallback) + problem;
  }

  private static final Pattern INDEX = Pattern.compile("\\[(\\d+)]");

  private static int findKey(String[] lines, int from, String key) {
    Pattern keyPattern = Pattern.compile("(^|[\\s{,-])" + Pattern.quote(key) + "\\s*:");
    for (int i = from; i < lines.length; i++) {
      String line = lines[i].replaceFirst("#.*$", "");
      if (keyPattern.matcher(line).find()) {
        return i;
      }
    }
    return -1;
  }

  private static int findEntry(String[] lines, int from, int index) {
    int seen = -1;
    for (int i = from; i < lines.length; i++) {
      if (lines[i].stripLeading().startsWith("- ")) {
        seen++;
        if (seen == index) {
          return i;
        }
      }
    }
    return -1;
  }

  private static String path(JsonMappingException e) {
    StringBuilder out = new StringBuilder();
    for (JsonMappingException.Reference ref : e.getPath()) {
      if (ref.getIndex() >= 0) {
        out.append('[').append(ref.getIndex()).append(']');
      } else if (ref.getFieldName() != null) {
        if (out.length() > 0) {
          out.append('.');
        }
        out.append(ref.getFieldName());
      }
    }
    return out.toString();
  }
}
