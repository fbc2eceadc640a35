package dev.fencing.agent.cli;

import java.util.ArrayList;
import java.util.List;

/** A plain left-aligned text table: columns as wide as their widest cell, two spaces apart. */
final class TextTable {

  private final List<String[]> rows = new ArrayList<>();
  private final int columns;

  TextTable(String... header) {
    this.columns = header.length;
    rows.add(header);
  }

  TextTable row(String... cells) {
    if (cells.length != columns) {
      throw new IllegalArgumentException("expected " + columns + " cells, got " + cells.length);
    }
    rows.add(cells);
    return this;
  }

  @Override
  public String toString() {
    int[] widths = new int[columns];
    for (String[] row : rows) {
      for (int i = 0; i < columns; i++) {
        widths[i] = Math.max(widths[i], row[i].length());
      }
    }
    StringBuilder out = new StringBuilder();
    for (String[] row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < columns; i++) {
        line.append(row[i]);
        if (i < columns - 1) {
          line.append(" ".repeat(widths[i] - row[i].length() + 2));
        }
      }
      out.append(line.toString().stripTrailing()).append('\n');
    }
    return out.toString();
  }
}
