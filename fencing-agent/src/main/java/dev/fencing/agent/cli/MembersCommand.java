package dev.fencing.agent.cli;

import com.google.protobuf.Empty;
import dev.fencing.proto.fencing.v1.AllNodes;
import dev.fencing.proto.fencing.v1.FencingGrpc;
import dev.fencing.proto.fencing.v1.Node;
import io.grpc.StatusRuntimeException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code fencing-agent members}: the members the agent currently considers reachable (GetAll). */
@Command(name = "members", mixinStandardHelpOptions = true,
    description = "List the members of this node's group the agent currently considers reachable.",
    exitCodeListHeading = "Exit codes:%n",
    exitCodeList = {"0:listed", "1:the agent answered with an error", "3:no agent at the socket"})
public final class MembersCommand implements Callable<Integer> {

  @Mixin AgentSocketOptions options = new AgentSocketOptions();
  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try (AgentConnection agent = AgentConnection.open(options.socket, err)) {
      if (agent == null) {
        return ExitCodes.NO_AGENT;
      }
      AllNodes all;
      try {
        all = FencingGrpc.newBlockingStub(agent.channel()).withDeadlineAfter(5, TimeUnit.SECONDS)
            .getAll(Empty.getDefaultInstance());
      } catch (StatusRuntimeException e) {
        return agent.fail(e, err);
      }
      out.print(options.json ? ProtoJson.pretty(all) + "\n" : table(all));
      out.flush();
      return ExitCodes.OK;
    }
  }

  static String table(AllNodes all) {
    TextTable table = new TextTable("NAME", "ADDRESSES", "PREV-DISCONNECT");
    for (Node n : all.getNodesList()) {
      table.row(n.getName(), HumanFormat.addresses(n.getAddressesMap()),
          n.hasPrevDisconnectTime() ? HumanFormat.time(n.getPrevDisconnectTime()) : "-");
    }
    return table.toString() + all.getNodesCount() + (all.getNodesCount() == 1 ? " member\n" : " members\n");
  }
}
