package dev.fencing.e2e.demo;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HeardMatrixTest {

    @Test
    void aThreePlusTwoPartitionShowsTwoBlocksAndTheSilentMinority() {
        String json = """
                {"group":"workers","leader":true,"generatedAt":"2026-11-22T10:00:20Z","staleAfter":10,"quorumSize":3,
                 "members":["node-1","node-2","node-3","node-4","node-5"],
                 "nodes":[
                  {"name":"node-1","reporting":true,"armed":true,"quorumHeld":true,"confirmed":3,
                   "lastContact":"2026-11-22T10:00:19.500Z","heard":"=++--","notConfirmed":["node-4","node-5"]},
                  {"name":"node-2","reporting":true,"armed":true,"quorumHeld":true,"confirmed":3,
                   "lastContact":"2026-11-22T10:00:20Z","heard":"+=+--","notConfirmed":["node-4","node-5"]},
                  {"name":"node-3","reporting":true,"armed":true,"quorumHeld":true,"confirmed":3,
                   "lastContact":"2026-11-22T10:00:20Z","heard":"++=--","notConfirmed":["node-4","node-5"]},
                  {"name":"node-4","reporting":false,"armed":null,"quorumHeld":null,"confirmed":null,
                   "lastContact":"2026-11-22T10:00:05Z","heard":"???=?","notConfirmed":[]},
                  {"name":"node-5","reporting":false,"armed":null,"quorumHeld":null,"confirmed":null,
                   "lastContact":null,"heard":"????=","notConfirmed":[]}]}""";

        String text = HeardMatrix.render(json);

        assertThat(text.lines()).containsExactly(
                "heard matrix from the controller (/debug/groups/workers, leader): row hears column; + confirmed, "
                        + "- not confirmed, ? no fresh report, = itself",
                "              1 2 3 4 5",
                "      1 node-1 = + + - -   armed yes, quorum held, last contact 0 s ago",
                "      2 node-2 + = + - -   armed yes, quorum held, last contact 0 s ago",
                "      3 node-3 + + = - -   armed yes, quorum held, last contact 0 s ago",
                "      4 node-4 ? ? ? = ?   armed ?, quorum ?, last contact 15 s ago",
                "      5 node-5 ? ? ? ? =   armed ?, quorum ?, last contact never");
    }
}
