/**
 * The {@code fencing-agent} command line: {@code run} (the agent), and {@code members}, {@code events},
 * {@code status} as clients of a running agent's socket, plus {@code softdog-emulator}.
 *
 * <pre>
 * fencing-agent members [--socket PATH] [--json]       # GetAll: NAME, ADDRESSES, PREV-DISCONNECT
 * fencing-agent events  [--socket PATH] [--json] [--count N] [--timeout DURATION]
 *                                                      # StreamEvents: snapshot JOINs, then live changes
 * fencing-agent status  [--socket PATH] [--json]       # GetStatus: arming, quorum, peers, timings
 * </pre>
 *
 * {@code --socket} defaults to {@code /var/run/fencing-agent.sock}. {@code --json} prints the proto3 JSON mapping
 * with protobuf's JsonFormat (lowerCamelCase fields, enum names, 64-bit integers as strings, RFC 3339 times, durations like {@code "1.500s"});
 * fields without presence are printed even at their default value. {@code events --json} prints one object per line.
 *
 * <p>Exit codes ({@link dev.fencing.agent.cli.ExitCodes}): 0 success; 1 the agent answered with an error; 2 invalid
 * command line; 3 no agent at the socket (missing file, nothing answers, or the agent went away); 4 {@code events}
 * was dropped by the agent because it fell behind (run it again to resync).
 */
package dev.fencing.agent.cli;
