package dev.fencing.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MemberSetDigestTest {

    @Test
    void theOrderAndRepeatsOfNamesDoNotMatter() {
        assertThat(MemberSetDigest.of(List.of("node-b", "node-a", "node-c", "node-a")))
                .isEqualTo(MemberSetDigest.of(Set.of("node-a", "node-b", "node-c")));
    }

    @Test
    void differentSetsHaveDifferentDigests() {
        String three = MemberSetDigest.of(List.of("node-a", "node-b", "node-c"));
        assertThat(MemberSetDigest.of(List.of("node-a", "node-b"))).isNotEqualTo(three);
        assertThat(MemberSetDigest.of(List.of("node-a", "node-b", "node-c", "node-d"))).isNotEqualTo(three);
        // Names are separated: "ab" + "c" is not "a" + "bc".
        assertThat(MemberSetDigest.of(List.of("ab", "c"))).isNotEqualTo(MemberSetDigest.of(List.of("a", "bc")));
    }

    @Test
    void isThirtyTwoLowerCaseHexDigitsOfSha256OverTheSortedNames() {
        // printf 'node-a\nnode-b\n' | sha256sum | cut -c1-32
        assertThat(MemberSetDigest.of(List.of("node-b", "node-a"))).isEqualTo("e23a79cb5395b5496528f36346288f33");
        assertThat(MemberSetDigest.of(List.of())).hasSize(32).matches("[0-9a-f]{32}");
    }
}
