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

class FenceArgumentsTest {

    private static final SecretKeyRef REF = new SecretKeyRef("ns", "bmc", "password");
    private static final SecretSource SECRETS = ref -> ref.equals(REF) ? Optional.of("s3cret") : Optional.empty();

    private static FenceMethod method(List<FenceParameter> parameters, List<SecretParameter> secrets) {
        return new FenceMethod("ipmi", "fence_ipmilan", parameters, secrets);
    }

    @Test
    void templatesExpandToTheNodeNameAndItsAnnotationAndSecretsAreFilledIn() {
        FenceArguments.Resolved r = FenceArguments.resolve(method(List.of(
                        new FenceParameter("ip", "$(NODE_ANNOTATION:example.com/bmc)"),
                        new FenceParameter("plug", "rack1-$(NODE_NAME)")),
                        List.of(new SecretParameter("password", REF))), "off", "node-a",
                Map.of("example.com/bmc", "198.18.0.10"), SECRETS);

        assertThat(r.error()).isNull();
        assertThat(r.arguments()).containsExactly(Map.entry("action", "off"), Map.entry("ip", "198.18.0.10"),
                Map.entry("plug", "rack1-node-a"), Map.entry("password", "s3cret"));
        assertThat(r.secretValues()).containsExactly("s3cret");
    }

    @Test
    void aMissingAnnotationNamesTheNodeAndTheKey() {
        FenceArguments.Resolved r = FenceArguments.resolve(method(List.of(
                new FenceParameter("ip", "$(NODE_ANNOTATION:example.com/bmc)")), null), "status", "node-a",
                Map.of(), SECRETS);

        assertThat(r.error()).isEqualTo("parameter ip: Node node-a has no annotation example.com/bmc");
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
                new FenceParameter("ip", "$(NODE_ANNOTATION:bmc)")), null), "off", "node-a",
                Map.of("bmc", "198.18.0.10\naction=on"), SECRETS);

        assertThat(r.error()).contains("parameter ip contains a line break");
        assertThat(r.arguments()).isEmpty();
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
