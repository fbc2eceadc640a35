package dev.fencing.agent.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Duration;
import com.google.protobuf.Message;
import com.google.protobuf.Timestamp;
import java.time.Instant;
import java.util.Base64;
import java.util.List;

/**
 * Protobuf messages as JSON in the proto3 JSON mapping (lowerCamelCase names, enums by name, 64-bit integers as
 * strings, Timestamp as RFC 3339, Duration as {@code "1.500s"}), written with Jackson. Unlike the default of
 * protobuf's JsonFormat, fields without presence are printed even at their default value so scripts can rely on
 * {@code .armed} being there; optional and message fields appear only when set.
 */
public final class ProtoJson {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private ProtoJson() {}

  /** One line of compact JSON. */
  public static String line(Message message) {
    return toJson(message).toString();
  }

  /** Indented JSON. */
  public static String pretty(Message message) {
    try {
      return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(toJson(message));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot format a JSON tree", e);
    }
  }

  /** The message as a Jackson tree. */
  public static JsonNode toJson(Message message) {
    if (message instanceof Timestamp t) {
      return NODES.textNode(Instant.ofEpochSecond(t.getSeconds(), t.getNanos()).toString());
    }
    if (message instanceof Duration d) {
      return NODES.textNode(duration(d));
    }
    ObjectNode node = NODES.objectNode();
    for (FieldDescriptor field : message.getDescriptorForType().getFields()) {
      if (field.hasPresence() && !message.hasField(field)) {
        continue;
      }
      Object value = message.getField(field);
      if (field.isMapField()) {
        ObjectNode map = NODES.objectNode();
        FieldDescriptor keyField = field.getMessageType().findFieldByNumber(1);
        FieldDescriptor valueField = field.getMessageType().findFieldByNumber(2);
        for (Object entry : (List<?>) value) {
          Message e = (Message) entry;
          map.set(String.valueOf(e.getField(keyField)), single(valueField, e.getField(valueField)));
        }
        node.set(field.getJsonName(), map);
      } else if (field.isRepeated()) {
        ArrayNode array = NODES.arrayNode();
        for (Object item : (List<?>) value) {
          array.add(single(field, item));
        }
        node.set(field.getJsonName(), array);
      } else {
        node.set(field.getJsonName(), single(field, value));
      }
    }
    return node;
  }

  private static JsonNode single(FieldDescriptor field, Object value) {
    return switch (field.getJavaType()) {
      case INT -> isUnsigned(field) ? NODES.numberNode(Integer.toUnsignedLong((Integer) value))
          : NODES.numberNode((Integer) value);
      case LONG -> NODES.textNode(isUnsigned(field) ? Long.toUnsignedString((Long) value) : value.toString());
      case FLOAT -> floating(((Float) value).doubleValue());
      case DOUBLE -> floating((Double) value);
      case BOOLEAN -> NODES.booleanNode((Boolean) value);
      case STRING -> NODES.textNode((String) value);
      case BYTE_STRING -> NODES.textNode(Base64.getEncoder().encodeToString(((ByteString) value).toByteArray()));
      case ENUM -> NODES.textNode(((EnumValueDescriptor) value).getName());
      case MESSAGE -> toJson((Message) value);
    };
  }

  private static boolean isUnsigned(FieldDescriptor field) {
    return switch (field.getType()) {
      case UINT32, FIXED32, UINT64, FIXED64 -> true;
      default -> false;
    };
  }

  private static JsonNode floating(double d) {
    if (Double.isNaN(d)) {
      return NODES.textNode("NaN");
    }
    if (Double.isInfinite(d)) {
      return NODES.textNode(d > 0 ? "Infinity" : "-Infinity");
    }
    return NODES.numberNode(d);
  }

  /** A Duration in the proto3 JSON form: seconds with 0, 3, 6 or 9 fractional digits and an "s". */
  static String duration(Duration d) {
    long seconds = d.getSeconds();
    int nanos = d.getNanos();
    StringBuilder out = new StringBuilder();
    if (seconds < 0 || nanos < 0) {
      out.append('-');
      seconds = -seconds;
      nanos = -nanos;
    }
    out.append(seconds);
    if (nanos != 0) {
      String digits = String.format("%09d", nanos);
      if (nanos % 1_000_000 == 0) {
        digits = digits.substring(0, 3);
      } else if (nanos % 1_000 == 0) {
        digits = digits.substring(0, 6);
      }
      out.append('.').append(digits);
    }
    return out.append('s').toString();
  }
}
