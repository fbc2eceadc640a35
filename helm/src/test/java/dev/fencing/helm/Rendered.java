package dev.fencing.helm;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;

/** The objects one {@code helm template} produced, looked up by kind and name. */
record Rendered(List<HasMetadata> objects) {

    Rendered {
        objects = List.copyOf(objects);
    }

    /** The only object of {@code type}, failing when there is none or several. */
    <T extends HasMetadata> T one(Class<T> type) {
        List<T> matching = all(type);
        if (matching.size() != 1) {
            throw new NoSuchElementException("expected exactly one " + type.getSimpleName() + " but rendered "
                    + matching.size() + ": " + describe());
        }
        return matching.get(0);
    }

    /** The object of {@code type} named {@code name}, failing when there is none. */
    <T extends HasMetadata> T named(Class<T> type, String name) {
        return all(type).stream().filter(o -> name.equals(o.getMetadata().getName())).findFirst()
                .orElseThrow(() -> new NoSuchElementException("no " + type.getSimpleName() + "/" + name + " in "
                        + describe()));
    }

    /** The only object of {@code type}, if rendered. */
    <T extends HasMetadata> Optional<T> find(Class<T> type) {
        List<T> matching = all(type);
        return matching.isEmpty() ? Optional.empty() : Optional.of(one(type));
    }

    /** Every object of {@code type}. */
    <T extends HasMetadata> List<T> all(Class<T> type) {
        return objects.stream().filter(type::isInstance).map(type::cast).toList();
    }

    /** "Kind/name" of every object, in rendering order. */
    List<String> describe() {
        return objects.stream().map(o -> o.getKind() + "/" + o.getMetadata().getName()).toList();
    }

    /** The controller container of the Deployment. */
    Container controllerContainer() {
        return one(Deployment.class).getSpec().getTemplate().getSpec().getContainers().stream()
                .filter(c -> c.getName().equals("controller")).findFirst()
                .orElseThrow(() -> new NoSuchElementException("no container named controller"));
    }

    /** The controller's command-line arguments. */
    List<String> args() {
        return controllerContainer().getArgs();
    }

    /** The value of {@code --flag=value}, if passed. */
    Optional<String> arg(String flag) {
        String prefix = flag + "=";
        return args().stream().filter(a -> a.startsWith(prefix)).map(a -> a.substring(prefix.length())).findFirst();
    }
}
