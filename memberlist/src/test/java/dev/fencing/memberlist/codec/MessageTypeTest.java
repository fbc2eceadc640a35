package dev.fencing.memberlist.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MessageTypeTest {

  @Test
  void everyTypeIsFoundByItsWireByteAndNoOtherByteNamesAType() {
    Set<Integer> codes = new HashSet<>();
    for (MessageType t : MessageType.values()) {
      assertThat(MessageType.fromCode(t.code())).isSameAs(t);
      codes.add(t.code());
    }
    for (int code = 0; code < 256; code++) {
      if (!codes.contains(code)) {
        assertThat(MessageType.fromCode(code)).as("byte %d", code).isNull();
      }
    }
  }

  @Test
  void valuesOutsideAByteNameNoType() {
    assertThat(MessageType.fromCode(-1)).isNull();
    assertThat(MessageType.fromCode(256)).isNull();
    assertThat(MessageType.fromCode(Integer.MIN_VALUE)).isNull();
    assertThat(MessageType.fromCode(Integer.MAX_VALUE)).isNull();
    assertThat(MessageType.fromCode(MessageType.HAS_LABEL.code() + 256)).isNull();
  }
}
