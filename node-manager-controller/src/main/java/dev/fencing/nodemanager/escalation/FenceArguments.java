package dev.fencing.nodemanager.escalation;

import dev.fencing.api.fencing.v1alpha1.FenceMethod;
import dev.fencing.api.fencing.v1alpha1.FenceParameter;
import dev.fencing.api.fencing.v1alpha1.SecretParameter;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A method's stdin parameters for one node: templates expanded, Secret values filled in, and checked again after
 * expansion (an annotation value with a line break would otherwise smuggle another parameter, e.g. a second
 * {@code action}, onto the agent's stdin). Pure apart from the {@link SecretSource}.
 *
 * <p>A Node's annotations are written by more than the cluster's administrators: its kubelet may change its own Node's
 * annotations (NodeRestriction protects labels only). {@code $(NODE_ANNOTATION:key)} therefore expands only keys under
 * {@link #NODE_ANNOTATION_PREFIX}, which the chart's ValidatingAdmissionPolicy keeps nodes from writing, and only
 * values a fence agent cannot read as more than one argument (see {@code SAFE_VALUE}). Otherwise a compromised
 * node could point its own power fencing at another machine's BMC, or add options to the agent's command line.
 */
public final class FenceArguments {

    /**
     * The only Node annotations {@code $(NODE_ANNOTATION:key)} expands: the chart's ValidatingAdmissionPolicy
     * {@code <fullname>-node-annotations} denies users of the group {@code system:nodes} any change to them.
     */
    public static final String NODE_ANNOTATION_PREFIX = "fencing.deckhouse.io/";

    /**
     * What an expanded annotation value may contain: an address, a host name, a port, a plug or a path. fence-agents
     * paste values unquoted into command lines split by {@code shlex} ({@code fence_ipmilan}: {@code " -H " + ip}),
     * {@code pexpect} ({@code ssh ... login@ip}) or a remote shell (plug names of the ssh and telnet agents), so
     * whitespace, quotes, backslashes and shell metacharacters could each add an argument, an option or a command.
     */
    private static final Pattern SAFE_VALUE = Pattern.compile("[A-Za-z0-9._:/%,\\[\\]-]+");

    /** The characters {@code SAFE_VALUE} allows, as an error message names them. */
    private static final String SAFE_CHARACTERS = "ASCII letters, digits and . _ - : / % , [ ]";

    private static final Pattern TEMPLATE = Pattern.compile("\\$\\(([A-Z_]+)(?::([^)]*))?\\)");

    private FenceArguments() {
    }

    /**
     * The arguments, or why there are none.
     *
     * @param arguments    stdin parameters in order, {@code action} first
     * @param secretValues values that must never appear in logs or status
     * @param error        what is wrong (names the parameter, never a secret value), or null
     */
    public record Resolved(Map<String, String> arguments, List<String> secretValues, String error) {

        static Resolved failed(String error) {
            return new Resolved(Map.of(), List.of(), error);
        }
    }

    /**
     * @param method      the method
     * @param action      {@code status}, {@code off} or {@code on}
     * @param node        the node's name
     * @param annotations the Node's annotations (empty when the Node is gone)
     * @param secrets     where secret parameters are read
     */
    public static Resolved resolve(FenceMethod method, String action, String node, Map<String, String> annotations,
                                   SecretSource secrets) {
        Map<String, String> out = new LinkedHashMap<>();
        out.put("action", action);
        List<String> secretValues = new ArrayList<>();
        if (method.parameters() != null) {
            for (FenceParameter p : method.parameters()) {
                if (out.containsKey(p.name())) {
                    return Resolved.failed("parameter " + p.name() + " is listed twice (or is 'action', which the "
                            + "controller sets)");
                }
                StringBuilder value = new StringBuilder();
                Matcher m = TEMPLATE.matcher(p.value());
                while (m.find()) {
                    Optional<String> refused = refusedAnnotation(m.group(1), m.group(2), node, annotations);
                    if (refused.isPresent()) {
                        return Resolved.failed("parameter " + p.name() + ": " + refused.get());
                    }
                    Optional<String> expanded = expand(m.group(1), m.group(2), node, annotations);
                    if (expanded.isEmpty()) {
                        return Resolved.failed("parameter " + p.name() + ": " + unresolved(m.group(1), m.group(2),
                                node));
                    }
                    m.appendReplacement(value, Matcher.quoteReplacement(expanded.get()));
                }
                m.appendTail(value);
                if (hasLineBreak(value)) {
                    return Resolved.failed("parameter " + p.name() + " contains a line break after expanding its "
                            + "templates; each parameter must be one stdin line");
                }
                out.put(p.name(), value.toString());
            }
        }
        if (method.secretParameters() != null) {
            for (SecretParameter s : method.secretParameters()) {
                if (out.containsKey(s.parameter())) {
                    return Resolved.failed("secret parameter " + s.parameter() + " is also a parameter (or is "
                            + "'action')");
                }
                Optional<String> value;
                try {
                    value = secrets.read(s.secretRef());
                } catch (RuntimeException e) {
                    // E.g. 403 for a namespace the chart's RBAC does not cover (secretNamespaces), or the API server
                    // down: this method fails like one whose BMC refuses, and the stage goes on with the next.
                    return Resolved.failed("secret parameter " + s.parameter() + ": Secret "
                            + s.secretRef().namespace() + "/" + s.secretRef().name() + " cannot be read: "
                            + readError(e));
                }
                if (value.isEmpty()) {
                    return Resolved.failed("secret parameter " + s.parameter() + ": Secret "
                            + s.secretRef().namespace() + "/" + s.secretRef().name() + " has no key "
                            + s.secretRef().key() + " (or does not exist, or the controller may not read it)");
                }
                if (hasLineBreak(value.get())) {
                    return Resolved.failed("secret parameter " + s.parameter() + ": the value in Secret "
                            + s.secretRef().namespace() + "/" + s.secretRef().name() + " key " + s.secretRef().key()
                            + " contains a line break; each parameter must be one stdin line");
                }
                out.put(s.parameter(), value.get());
                if (!value.get().isEmpty()) {
                    secretValues.add(value.get());
                }
            }
        }
        return new Resolved(out, List.copyOf(secretValues), null);
    }

    private static String readError(RuntimeException e) {
        if (e instanceof KubernetesClientException k && k.getCode() > 0) {
            return "HTTP " + k.getCode() + (k.getCode() == 403 ? " (the controller may not read it: add its namespace "
                    + "to the chart's controller.powerFencing.secretNamespaces)" : "") + ": " + k.getMessage();
        }
        return e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    private static Optional<String> expand(String name, String argument, String node,
                                           Map<String, String> annotations) {
        if ("NODE_NAME".equals(name) && argument == null) {
            return Optional.of(node);
        }
        if ("NODE_ANNOTATION".equals(name) && argument != null) {
            return Optional.ofNullable(annotations.get(argument));
        }
        return Optional.empty();
    }

    // Why $(NODE_ANNOTATION:key) may not be expanded for this node (the key, or its value), if it may not.
    private static Optional<String> refusedAnnotation(String name, String key, String node,
                                                      Map<String, String> annotations) {
        if (!"NODE_ANNOTATION".equals(name) || key == null) {
            return Optional.empty();
        }
        if (!key.startsWith(NODE_ANNOTATION_PREFIX) || key.length() == NODE_ANNOTATION_PREFIX.length()) {
            return Optional.of("$(NODE_ANNOTATION:" + key + ") is not expanded: only annotations under "
                    + NODE_ANNOTATION_PREFIX + " are, because the chart's admission policy keeps nodes from writing "
                    + "them (a node may rewrite its other annotations and so choose the machine its own power fencing "
                    + "hits); put the value in an annotation " + NODE_ANNOTATION_PREFIX + "<name>");
        }
        String value = annotations.get(key);
        if (value == null || (SAFE_VALUE.matcher(value).matches() && !value.startsWith("-"))) {
            return Optional.empty();
        }
        // The value is not quoted: it may be what an attacker wrote, and made to mislead the reader of the message.
        return Optional.of("the value of annotation " + key + " of Node " + node + " is refused: "
                + unsafeBecause(value) + "; a fence agent could read it as more than one argument or as an option. "
                + "An annotation value may hold " + SAFE_CHARACTERS + ", not starting with '-'");
    }

    private static String unsafeBecause(String value) {
        if (value.isEmpty()) {
            return "it is empty";
        }
        if (value.startsWith("-")) {
            return "it starts with '-'";
        }
        for (int c : value.codePoints().toArray()) {
            String hex = String.format("U+%04X", c);
            if (Character.isWhitespace(c) || Character.isSpaceChar(c)) {
                return "it contains whitespace (" + hex + ")";
            }
            if (Character.isISOControl(c) || Character.getType(c) == Character.FORMAT) {
                return "it contains a control character (" + hex + ")";
            }
            if (c >= 0x80) {
                return "it contains a character outside ASCII (" + hex + ")";
            }
            if (!SAFE_VALUE.matcher(Character.toString(c)).matches()) {
                return "it contains '" + (char) c + "'";
            }
        }
        return "it is not allowed";
    }

    private static String unresolved(String name, String argument, String node) {
        if ("NODE_ANNOTATION".equals(name) && argument != null) {
            return "Node " + node + " has no annotation " + argument;
        }
        return "unknown template $(" + name + (argument == null ? "" : ":" + argument) + "); use $(NODE_NAME) or "
                + "$(NODE_ANNOTATION:<key>)";
    }

    private static boolean hasLineBreak(CharSequence s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == '\n' || s.charAt(i) == '\r') {
                return true;
            }
        }
        return false;
    }
}
