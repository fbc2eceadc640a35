package dev.fencing.agent.cli;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;

/**
 * Protobuf messages as JSON in the proto3 JSON mapping (lowerCamelCase names, enums by name, 64-bit integers as
 * strings, Timestamp as RFC 3339, Duration as {@code "1.500s"}), printed by protobuf's {@link JsonFormat}. Unlike
 * JsonFormat's default, fields without presence are printed even at their default value so scripts can rely on
 * {@code .armed} being there; optional and message fields appear only when set.
 */
public final class ProtoJson {

  private static final JsonFormat.Printer PRETTY = JsonFormat.printer().alwaysPrintFieldsWithNoPresence();
  private static final JsonFormat.Printer LINE = PRETTY.omittingInsignificantWhitespace();

  private ProtoJson() {}

  /** One line of compact JSON. */
  public static String line(MessageOrBuilder message) {
    return print(LINE, message);
  }

  /** Indented JSON. */
  public static String pretty(MessageOrBuilder message) {
    return print(PRETTY, message);
  }

  private static String print(JsonFormat.Printer printer, MessageOrBuilder message) {
    try {
      return printer.print(message);
    } catch (InvalidProtocolBufferException e) {
      // Only an Any whose type is not registered fails; the agent API has no Any fields.
      throw new IllegalStateException("cannot print " + message.getDescriptorForType().getFullName() + " as JSON", e);
    }
  }
}
