package dev.fencing.nodemanager.grpc;

import dev.fencing.nodemanager.model.GroupModel;
import java.util.Map;
import java.util.Optional;

/** An {@link AgentDirectory} over a map of models the test publishes: a node belongs to the group that signals it. */
final class TestDirectory implements AgentDirectory {

    private final Map<String, GroupModel> models;

    TestDirectory(Map<String, GroupModel> models) {
        this.models = models;
    }

    @Override
    public Optional<String> groupOf(String node) {
        return models.values().stream().filter(m -> m.signals().containsKey(node)).map(GroupModel::group)
                .findFirst();
    }

    @Override
    public Optional<GroupModel> model(String group) {
        return Optional.ofNullable(models.get(group));
    }
}
