package dev.fencing.api.fencing.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class NodeFencingLabelTest {

    // What Kubernetes accepts as a label value.
    private static final String LABEL_VALUE = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";

    @Test
    void aNameThatFitsIsTheLabelValue() {
        String name = "w".repeat(63);
        assertThat(NodeFencing.nodeLabelValue("worker-1")).isEqualTo("worker-1");
        assertThat(NodeFencing.nodeLabelValue(name)).isEqualTo(name);
    }

    @Test
    void aLongerNameIsShortenedToAValidDistinctValue() {
        String a = "node-1.rack-17.datacenter-west.example-corporation.internal.example";
        String b = "node-1.rack-17.datacenter-west.example-corporation.internal.example2";
        // Shortened at a dot: the trailing separator goes, so the value still ends with an alphanumeric.
        String c = "a".repeat(51) + ".bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
        for (String name : new String[] {a, b, c, "x".repeat(253)}) {
            String v = NodeFencing.nodeLabelValue(name);
            assertThat(v).hasSizeLessThanOrEqualTo(63).matches(LABEL_VALUE);
            assertThat(v).isEqualTo(NodeFencing.nodeLabelValue(name));
        }
        assertThat(NodeFencing.nodeLabelValue(a)).isNotEqualTo(NodeFencing.nodeLabelValue(b))
                .startsWith(a.substring(0, 52));
        assertThat(NodeFencing.nodeLabelValue(c)).startsWith("a".repeat(51) + "-");
    }
}
