package dev.fencing.agent.cli;

import com.google.protobuf.Empty;
import dev.fencing.proto.fencing.v1.AllNodes;
import dev.fencing.proto.fencing.v1.Node;
import java.util.concurrent.Callable;
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
    return AgentConnection.printUnary(options, spec, stub -> stub.getAll(Empty.getDefaultInstance()),
        MembersCommand::table);
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
