package dev.fencing.helm;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The chart under test, driven through Helm's own Go library (helm-java): {@code helm template} into typed fabric8
 * objects and {@code helm lint}. The chart is read from the checkout ({@code chart.dir}, set by the pom).
 */
final class FencingChart {

    /** Release namespace used by every render. */
    static final String NAMESPACE = "d8-fencing";
    /** Kubernetes version Helm renders for (the chart requires ≥ 1.25; helm-java's default is older). */
    static final String KUBE_VERSION = "1.30.0";

    private static final Pattern DOCUMENT_SEPARATOR = Pattern.compile("(?m)^---\\s*$");
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private FencingChart() {
    }

    /** The chart directory. */
    static Path dir() {
        return Path.of(System.getProperty("chart.dir", "fencing")).toAbsolutePath();
    }

    /** {@code helm template} with the default values plus {@code --set key=value} pairs. */
    static Rendered render(Object... keyValues) {
        return renderWithValues(null, keyValues);
    }

    /**
     * {@code helm template} with a values file (YAML text, may be null) and {@code --set key=value} pairs; throws
     * {@link IllegalStateException} with Helm's message when rendering fails.
     */
    static Rendered renderWithValues(String valuesYaml, Object... keyValues) {
        return new Rendered(parse(template(valuesYaml, keyValues)));
    }

    /** The raw output of {@code helm template}. */
    static String template(String valuesYaml, Object... keyValues) {
        return templateIn(NAMESPACE, valuesYaml, keyValues);
    }

    /** The raw output of {@code helm template} for a release in {@code namespace}. */
    static String templateIn(String namespace, String valuesYaml, Object... keyValues) {
        if (keyValues.length % 2 != 0) {
            throw new IllegalArgumentException("key/value pairs expected");
        }
        TemplateCommand command = new Helm(dir()).template()
                .withName("fencing")
                .withNamespace(namespace)
                .withKubeVersion(KUBE_VERSION);
        return call(command, valuesYaml, keyValues);
    }

    /** {@code helm template} for another Kubernetes version, with {@code --set key=value} pairs. */
    static String templateForKubeVersion(String kubeVersion, Object... keyValues) {
        return call(new Helm(dir()).template().withName("fencing").withNamespace(NAMESPACE)
                .withKubeVersion(kubeVersion), null, keyValues);
    }

    /** {@code helm lint --strict} with the default values. */
    static LintResult lint() {
        return new Helm(dir()).lint().strict().call();
    }

    /**
     * {@code helm lint --strict} of a copy of the chart whose values.yaml has each {@code from} line replaced by its
     * {@code to} line (lint takes no --set); fails when a line to replace is missing.
     */
    static LintResult lintWithValuesLines(Map<String, String> replacements) {
        Path copy = null;
        try {
            copy = Files.createTempDirectory("fencing-chart-");
            Path target = copy.resolve("fencing");
            try (Stream<Path> files = Files.walk(dir())) {
                for (Path source : files.toList()) {
                    Path to = target.resolve(dir().relativize(source).toString());
                    if (Files.isDirectory(source)) {
                        Files.createDirectories(to);
                    } else {
                        Files.copy(source, to);
                    }
                }
            }
            Path values = target.resolve("values.yaml");
            String text = Files.readString(values);
            for (Map.Entry<String, String> e : replacements.entrySet()) {
                if (!text.contains(e.getKey() + "\n")) {
                    throw new IllegalArgumentException("values.yaml has no line " + e.getKey());
                }
                text = text.replace(e.getKey() + "\n", e.getValue() + "\n");
            }
            Files.writeString(values, text);
            return new Helm(target).lint().strict().call();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (copy != null) {
                deleteTree(copy);
            }
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException ignored) {
            // a leftover temp directory does not change the outcome of a test
        }
    }

    private static String call(TemplateCommand command, String valuesYaml, Object... keyValues) {
        for (int i = 0; i < keyValues.length; i += 2) {
            command.set(String.valueOf(keyValues[i]), keyValues[i + 1]);
        }
        Path valuesFile = null;
        try {
            if (valuesYaml != null) {
                valuesFile = Files.createTempFile("fencing-values-", ".yaml");
                Files.writeString(valuesFile, valuesYaml);
                command.withValuesFile(valuesFile);
            }
            return command.call();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (valuesFile != null) {
                try {
                    Files.deleteIfExists(valuesFile);
                } catch (IOException ignored) {
                    // a leftover temp file does not change the outcome of a test
                }
            }
        }
    }

    /** Splits a multi-document stream and deserialises every non-empty document into its fabric8 model class. */
    static List<HasMetadata> parse(String manifests) {
        List<HasMetadata> objects = new ArrayList<>();
        for (String doc : DOCUMENT_SEPARATOR.split(manifests)) {
            if (doc.lines().allMatch(l -> l.isBlank() || l.stripLeading().startsWith("#"))) {
                continue;
            }
            Object parsed = SERIALIZATION.unmarshal(doc);
            if (!(parsed instanceof HasMetadata object)) {
                throw new IllegalStateException("rendered document is not a Kubernetes object:\n" + doc);
            }
            objects.add(object);
        }
        return objects;
    }

    /** Deserialises one YAML document into {@code type}. */
    static <T> T parse(String yaml, Class<T> type) {
        return SERIALIZATION.unmarshal(yaml, type);
    }
}
