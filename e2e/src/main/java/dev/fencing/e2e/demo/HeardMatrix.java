package dev.fencing.e2e.demo;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.time.Instant;

/**
 * Renders the controller's group view ({@code GET /debug/groups/<group>}, the JSON {@code kubectl fencing view}
 * prints) as the demo's heard matrix: one row per node with its marks per peer, armed, quorum and last contact.
 */
final class HeardMatrix {

    private HeardMatrix() {
    }

    /**
     * @param json the controller's answer
     * @return the matrix as indented lines, ending without a newline
     */
    static String render(String json) {
        JsonNode view;
        try {
            view = new ObjectMapper().readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("the controller's group view is not JSON: " + e.getOriginalMessage(), e);
        }
        StringBuilder out = new StringBuilder("heard matrix from the controller (/debug/groups/")
                .append(view.path("group").asText()).append(", ")
                .append(view.path("leader").asBoolean() ? "leader" : "follower")
                .append("): row hears column; + confirmed, - not confirmed, ? no fresh report, = itself\n");
        int width = 0;
        for (JsonNode m : view.path("members")) {
            width = Math.max(width, m.asText().length());
        }
        StringBuilder header = new StringBuilder(" ".repeat(width + 2));
        for (int i = 1; i <= view.path("members").size(); i++) {
            header.append(i % 10).append(' ');
        }
        out.append("      ").append(header.toString().stripTrailing());
        Instant now = Instant.parse(view.path("generatedAt").asText());
        int index = 1;
        for (JsonNode row : view.path("nodes")) {
            out.append("\n      ").append(index++ % 10).append(' ')
                    .append(String.format("%-" + width + "s ", row.path("name").asText()))
                    .append(String.join(" ", row.path("heard").asText().split("")))
                    .append("   armed ").append(flag(row.path("armed"), "yes", "no"))
                    .append(", quorum ").append(flag(row.path("quorumHeld"), "held", "lost"))
                    .append(", last contact ").append(row.path("lastContact").isTextual()
                            ? Duration.between(Instant.parse(row.path("lastContact").asText()), now).toSeconds()
                                    + " s ago" : "never");
        }
        return out.toString();
    }

    private static String flag(JsonNode value, String yes, String no) {
        return value.isBoolean() ? (value.asBoolean() ? yes : no) : "?";
    }
}
