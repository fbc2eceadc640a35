package dev.fencing.e2e.scenario;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Collects a scenario's timings and prints them as one table when the scenario ends. */
final class ScenarioReport {

    private final String scenario;
    private final List<String[]> rows = new ArrayList<>();

    ScenarioReport(String scenario) {
        this.scenario = scenario;
    }

    /** Adds one measured figure. */
    ScenarioReport add(String what, String node, long millis, String bound) {
        rows.add(new String[] {what, node, String.format(Locale.ROOT, "%d", millis), bound});
        return this;
    }

    /** Adds a plain fact. */
    ScenarioReport note(String what, String node, String value) {
        rows.add(new String[] {what, node, value, ""});
        return this;
    }

    void print() {
        StringBuilder out = new StringBuilder();
        out.append('\n').append("scenario: ").append(scenario).append('\n');
        out.append(String.format(Locale.ROOT, "  %-44s %-8s %10s  %s%n", "measure", "node", "ms/value", "bound"));
        for (String[] row : rows) {
            out.append(String.format(Locale.ROOT, "  %-44s %-8s %10s  %s%n", row[0], row[1], row[2], row[3]));
        }
        System.out.print(out);
    }
}
