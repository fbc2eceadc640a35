package dev.fencing.memberlist.node;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The node's line protocol: writes one flat JSON object per line, and reads flat objects whose values are strings,
 * booleans or numbers. Deliberately minimal: the module has no JSON library and the protocol needs nothing more.
 */
final class JsonLine {
  private final StringBuilder out = new StringBuilder(128).append('{');
  private boolean first = true;

  static JsonLine event(long tsMillis, String event) {
    return new JsonLine().number("ts", tsMillis).string("event", event);
  }

  JsonLine string(String key, String value) {
    key(key);
    quote(value);
    return this;
  }

  JsonLine number(String key, long value) {
    key(key);
    out.append(value);
    return this;
  }

  JsonLine bool(String key, boolean value) {
    key(key);
    out.append(value);
    return this;
  }

  JsonLine strings(String key, Collection<String> values) {
    key(key);
    out.append('[');
    boolean firstValue = true;
    for (String v : values) {
      if (!firstValue) {
        out.append(',');
      }
      firstValue = false;
      quote(v);
    }
    out.append(']');
    return this;
  }

  @Override
  public String toString() {
    return out + "}";
  }

  private void key(String key) {
    if (!first) {
      out.append(',');
    }
    first = false;
    quote(key);
    out.append(':');
  }

  private void quote(String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  /**
   * Parses one flat JSON object; values become strings ({@code true}/{@code false}/numbers as their text).
   *
   * @throws IllegalArgumentException with what was wrong
   */
  static Map<String, String> parse(String line) {
    Parser p = new Parser(line);
    return p.object();
  }

  private static final class Parser {
    private final String s;
    private int i;

    Parser(String s) {
      this.s = s;
    }

    Map<String, String> object() {
      Map<String, String> out = new LinkedHashMap<>();
      skipSpace();
      expect('{');
      skipSpace();
      if (peek() == '}') {
        i++;
        return out;
      }
      while (true) {
        skipSpace();
        String key = string();
        skipSpace();
        expect(':');
        skipSpace();
        out.put(key, value());
        skipSpace();
        char c = next();
        if (c == '}') {
          break;
        }
        if (c != ',') {
          throw new IllegalArgumentException("expected ',' or '}' at offset " + (i - 1));
        }
      }
      skipSpace();
      if (i != s.length()) {
        throw new IllegalArgumentException("trailing characters after the object at offset " + i);
      }
      return out;
    }

    private String value() {
      char c = peek();
      if (c == '"') {
        return string();
      }
      int start = i;
      while (i < s.length() && ",} \t".indexOf(s.charAt(i)) < 0) {
        i++;
      }
      String literal = s.substring(start, i);
      if (literal.equals("true") || literal.equals("false") || literal.matches("-?[0-9.eE+-]+")) {
        return literal;
      }
      throw new IllegalArgumentException("unsupported value \"" + literal + "\" (only strings, booleans, numbers)");
    }

    private String string() {
      expect('"');
      StringBuilder b = new StringBuilder();
      while (true) {
        char c = next();
        if (c == '"') {
          return b.toString();
        }
        if (c != '\\') {
          b.append(c);
          continue;
        }
        char e = next();
        switch (e) {
          case '"', '\\', '/' -> b.append(e);
          case 'n' -> b.append('\n');
          case 'r' -> b.append('\r');
          case 't' -> b.append('\t');
          case 'b' -> b.append('\b');
          case 'f' -> b.append('\f');
          case 'u' -> {
            if (i + 4 > s.length()) {
              throw new IllegalArgumentException("truncated \\u escape");
            }
            try {
              b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
            } catch (NumberFormatException ex) {
              throw new IllegalArgumentException("bad \\u escape at offset " + i);
            }
            i += 4;
          }
          default -> throw new IllegalArgumentException("bad escape \\" + e);
        }
      }
    }

    private void skipSpace() {
      while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
        i++;
      }
    }

    private char peek() {
      if (i >= s.length()) {
        throw new IllegalArgumentException("unexpected end of line");
      }
      return s.charAt(i);
    }

    private char next() {
      char c = peek();
      i++;
      return c;
    }

    private void expect(char c) {
      if (next() != c) {
        throw new IllegalArgumentException("expected '" + c + "' at offset " + (i - 1));
      }
    }
  }
}
