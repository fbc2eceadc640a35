package dev.fencing.nodemanager.escalation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.api.fencing.v1alpha1.FenceMethod;
import dev.fencing.api.fencing.v1alpha1.FenceParameter;
import dev.fencing.api.fencing.v1alpha1.SecretKeyRef;
import dev.fencing.api.fencing.v1alpha1.SecretParameter;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FenceArgumentsTest {

    private static final SecretKeyRef REF = new SecretKeyRef("ns", "bmc", "password");
    private static final String BMC = "fencing.deckhouse.io/bmc-address";
    private static final SecretSource SECRETS = ref -> ref.equals(REF) ? Optional.of("s3cret") : Optional.empty();

    private static FenceMethod method(List<FenceParameter> parameters, List<SecretParameter> secrets) {
        return new FenceMethod("ipmi", "fence_ipmilan", parameters, secrets);
    }

    @Test
    void templatesExpandToTheNodeNameAndItsAnnotationAndSecretsAreFilledIn() {
        FenceArguments.Resolved r = FenceArguments.resolve(method(List.of(
                        new FenceParameter("ip", "$(NODE_ANNOTATION:fencing.deckhouse.io/bmc-address)"),
                        new FenceParameter("plug", "rack1-$(NODE_NAME)")),
                        List.of(new SecretParameter("password", REF))), "off", "node-a",
                Map.of("fencing.deckhouse.io/bmc-address", "198.18.0.10"), SECRETS);

        assertThat(r.error()).isNull();
        assertThat(r.arguments()).containsExactly(Map.entry("action", "off"), Map.entry("ip", "198.18.0.10"),
                Map.entry("plug", "rack1-node-a"), Map.entry("password", "s3cret"));
        assertThat(r.secretValues()).containsExactly("s3cret");
    }

    @Test
    void aMissingAnnotationNamesTheNodeAndTheKey() {
        FenceArguments.Resolved r = FenceArguments.resolve(method(List.of(
                new FenceParameter("ip", "$(NODE_ANNOTATION:" + BMC + ")")), null), "status", "node-a", Map.of(),
                SECRETS);

        assertThat(r.error()).isEqualTo("parameter ip: Node node-a has no annotation fencing.deckhouse.io/bmc-address");
    }

    @Test
    void anUnknownTemplateIsRefusedWithTheOnesThatExist() {
        FenceArguments.Resolved r = FenceArguments.resolve(method(List.of(
                new FenceParameter("ip", "$(NODE_IP)")), null), "status", "node-a", Map.of(), SECRETS);

        assertThat(r.error()).contains("unknown template $(NODE_IP)", "$(NODE_NAME)", "$(NODE_ANNOTATION:<key>)");
    }

    @Test
    void anAnnotationWithALineBreakCannotSmuggleAnotherStdinParameter() {
        FenceArguments.Resolved r = FenceArguments.resolve(method(List.of(
                new FenceParameter("ip", "$(NODE_ANNOTATION:" + BMC + ")")), null), "off", "node-a",
                Map.of(BMC, "198.18.0.10\naction=on"), SECRETS);

        assertThat(r.error()).startsWith("parameter ip: the value of annotation " + BMC + " of Node node-a is refused: "
                + "it contains whitespace (U+000A)");
        assertThat(r.arguments()).isEmpty();
    }

    private static FenceArguments.Resolved ipFromAnnotation(String value) {
        return FenceArguments.resolve(method(List.of(new FenceParameter("ip", "$(NODE_ANNOTATION:" + BMC + ")"),
                new FenceParameter("lanplus", "1")), null), "off", "node-a", Map.of(BMC, value), SECRETS);
    }

    /**
     * fence_ipmilan builds {@code " -H " + ip} into a command line that {@code shlex.split} cuts apart, the ssh-based
     * agents hand {@code login@ip} to pexpect, and plug names reach remote shells: a value with whitespace, a leading
     * '-', a quote or a shell metacharacter would add arguments, options or commands.
     */
    @ParameterizedTest
    @ValueSource(strings = {"198.18.0.9 -t 0x82", "-t0x82", "--ipport=624", "198.18.0.9\t-b7", "h -oProxyCommand=x",
            "198.18.0.9\u00a0-t", "198.18.0.9\u0007", "198.18.0.9\u007f", "\"198.18.0.9", "a'b", "a\\b", "a;reboot",
            "$(reboot)", "`reboot`", "a|b", "a&b", "a>b", "a*", "~root", "h\u202e", "bmc\u00e9", ""})
    void anAnnotationValueThatWouldSplitIntoSeveralAgentArgumentsIsRefused(String value) {
        FenceArguments.Resolved r = ipFromAnnotation(value);

        assertThat(r.error()).as(value).startsWith("parameter ip: the value of annotation " + BMC + " of Node node-a "
                + "is refused: it ").contains("An annotation value may hold ASCII letters, digits and "
                + ". _ - : / % , [ ], not starting with '-'");
        assertThat(r.arguments()).isEmpty();
    }

    @Test
    void aRefusedValueIsDescribedNotQuoted() {
        assertThat(ipFromAnnotation("198.18.0.9 -t 0x82").error()).contains("it contains whitespace (U+0020)")
                .doesNotContain("0x82");
        assertThat(ipFromAnnotation("-t0x82").error()).contains("it starts with '-'");
        assertThat(ipFromAnnotation("a;b").error()).contains("it contains ';'");
        assertThat(ipFromAnnotation("h\u0007").error()).contains("it contains a control character (U+0007)");
        assertThat(ipFromAnnotation("bmc\u00e9").error()).contains("a character outside ASCII (U+00E9)");
        assertThat(ipFromAnnotation("").error()).contains("it is empty");
    }

    /** Addresses, host names, ports, plug names and paths still expand. */
    @ParameterizedTest
    @ValueSource(strings = {"198.18.0.10", "2001:db8::1", "[fe80::1%eth0]", "bmc-17.rack1.example.com", "623",
            "rack1/blade_3", "1,2", "i-0abc123def", "/redfish/v1/Systems/1", "node-a.bmc"})
    void legitimateAnnotationValuesExpand(String value) {
        FenceArguments.Resolved r = ipFromAnnotation(value);

        assertThat(r.error()).isNull();
        assertThat(r.arguments()).containsEntry("ip", value);
    }

    /**
     * A kubelet may rewrite every annotation of its own Node; the chart's admission policy keeps it from those under
     * fencing.deckhouse.io/ only. An annotation elsewhere is never expanded, present or not.
     */
    @ParameterizedTest
    @ValueSource(strings = {"example.com/bmc", "bmc", "node-manager.deckhouse.io/bmc", "sub.fencing.deckhouse.io/bmc",
            "xfencing.deckhouse.io/bmc", "fencing.deckhouse.io", "fencing.deckhouse.io/"})
    void onlyAnnotationsUnderTheReservedPrefixAreExpanded(String key) {
        FenceArguments.Resolved r = FenceArguments.resolve(method(List.of(
                new FenceParameter("ip", "$(NODE_ANNOTATION:" + key + ")")), null), "off", "node-a",
                Map.of(key, "198.18.0.66"), SECRETS);

        assertThat(r.error()).startsWith("parameter ip: $(NODE_ANNOTATION:" + key + ") is not expanded: only "
                + "annotations under fencing.deckhouse.io/ are").contains("the chart's admission policy");
        assertThat(r.arguments()).isEmpty();
        assertThat(FenceArguments.NODE_ANNOTATION_PREFIX).isEqualTo("fencing.deckhouse.io/");
    }

    @Test
    void aMissingSecretKeyIsNamedWithoutAnyValue() {
        SecretKeyRef other = new SecretKeyRef("ns", "bmc", "pass");
        FenceArguments.Resolved r = FenceArguments.resolve(method(null, List.of(new SecretParameter("password",
                other))), "status", "node-a", Map.of(), SECRETS);

        assertThat(r.error()).isEqualTo("secret parameter password: Secret ns/bmc has no key pass (or does not "
                + "exist, or the controller may not read it)");
    }

    /** A Secret the controller may not read (403) fails the method with the reason; it does not throw. */
    @Test
    void aSecretTheControllerMayNotReadFailsTheMethodWithTheReason() {
        SecretKeyRef ref = new SecretKeyRef("other-ns", "bmc", "pass");
        FenceArguments.Resolved r = FenceArguments.resolve(method(null, List.of(new SecretParameter("password",
                ref))), "status", "node-a", Map.of(), k -> {
                    throw new io.fabric8.kubernetes.client.KubernetesClientException("secrets \"bmc\" is forbidden",
                            403, null);
                });

        assertThat(r.error()).startsWith("secret parameter password: Secret other-ns/bmc cannot be read: HTTP 403 "
                + "(the controller may not read it: add its namespace to the chart's "
                + "controller.powerFencing.secretNamespaces)").contains("forbidden");
        assertThat(r.arguments()).isEmpty();
    }

    @Test
    void aParameterListedTwiceIsRefused() {
        FenceArguments.Resolved r = FenceArguments.resolve(method(List.of(new FenceParameter("ip", "a"),
                new FenceParameter("ip", "b")), null), "status", "node-a", Map.of(), SECRETS);

        assertThat(r.error()).startsWith("parameter ip is listed twice");
    }
}
