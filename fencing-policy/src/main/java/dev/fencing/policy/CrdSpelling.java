package dev.fencing.policy;

import java.util.Arrays;
import java.util.function.Function;
import java.util.stream.Collectors;

/** Parses the exact CRD spelling of an enum value; the one place that builds the "allowed values" message. */
final class CrdSpelling {

    private CrdSpelling() {
    }

    static <E extends Enum<E>> E parse(Class<E> type, String what, String crdValue, Function<E, String> spelling) {
        E[] values = type.getEnumConstants();
        if (crdValue == null) {
            throw new IllegalArgumentException(what + " is missing; use one of " + allowed(values, spelling));
        }
        for (E value : values) {
            if (spelling.apply(value).equals(crdValue)) {
                return value;
            }
        }
        for (E value : values) {
            if (spelling.apply(value).equalsIgnoreCase(crdValue.trim())) {
                throw new IllegalArgumentException(what + " '" + crdValue
                        + "' is not spelled as the CRD expects; write '"
                        + spelling.apply(value) + "'");
            }
        }
        throw new IllegalArgumentException(what + " '" + crdValue + "' is not known; use one of "
                + allowed(values, spelling));
    }

    static <E extends Enum<E>> String allowed(E[] values, Function<E, String> spelling) {
        return Arrays.stream(values).map(spelling).collect(Collectors.joining(", "));
    }
}
