package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The values table of helm/README.md documents every value the schema accepts. */
class ReadmeValuesTest {

    private static final Pattern CODE = Pattern.compile("`([A-Za-z0-9_.]+)`");

    @Test
    void everyValueOfTheSchemaHasARowInTheReadme() throws IOException {
        JsonNode schema = new ObjectMapper().readTree(FencingChart.dir().resolve("values.schema.json").toFile());
        List<String> values = new ArrayList<>();
        leaves(schema, "", values);
        values.remove("global");
        Set<String> documented = documentedKeys(FencingChart.dir().getParent().resolve("README.md"));

        assertThat(values).as("values in values.schema.json").hasSizeGreaterThan(40);
        assertThat(values).as("values without a row (or a row for a parent key) in helm/README.md")
                .filteredOn(v -> !isDocumented(v, documented)).isEmpty();
        assertThat(documented).as("rows in helm/README.md naming no value of the schema")
                .allMatch(key -> values.stream().anyMatch(v -> v.equals(key) || v.startsWith(key + ".")));
    }

    private static void leaves(JsonNode node, String prefix, List<String> out) {
        JsonNode properties = node.get("properties");
        if (properties == null) {
            out.add(prefix);
            return;
        }
        properties.fields().forEachRemaining(e ->
                leaves(e.getValue(), prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey(), out));
    }

    private static boolean isDocumented(String value, Set<String> documented) {
        for (String key = value; !key.isEmpty(); key = key.contains(".") ? key.substring(0, key.lastIndexOf('.')) : "") {
            if (documented.contains(key)) {
                return true;
            }
        }
        return false;
    }

    /** Keys in backticks in the first cell of the rows of the "## Values" table. */
    private static Set<String> documentedKeys(Path readme) throws IOException {
        Set<String> keys = new HashSet<>();
        boolean inValues = false;
        for (String line : Files.readAllLines(readme)) {
            if (line.startsWith("## ")) {
                inValues = line.equals("## Values");
            } else if (inValues && line.startsWith("| `")) {
                Matcher m = CODE.matcher(line.substring(1, line.indexOf('|', 1)));
                while (m.find()) {
                    keys.add(m.group(1));
                }
            }
        }
        return keys;
    }
}
