package dev.fencing.agent.membership;

import dev.fencing.proto.fencing.v1.EventType;
import java.time.Instant;
import java.util.Map;

/** Where membership decisions go: the local API's event hub in the agent, a list in tests. */
@FunctionalInterface
public interface MembershipSink {

  void publish(EventType type, String nodeName, Map<String, String> addresses, Instant time, String sourceName);
}
