"""Projects in the metadata table (memlane.ports.ProjectStore): pk=ORG#{org}, sk=PROJECT#{id},
with a slug item beside it (sk=PROJSLUG#{slug}) so a slug names one project of an
organization. A project's documents are counted through GSI1 (gsi1pk = the project), keys only.
"""

from __future__ import annotations

from typing import Any

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws.dynamo_codec import conditional_put, model_attributes, model_from_item, serialize
from memlane.adapters.aws.dynamo_table import DynamoTable, _key
from memlane.domain.errors import NotFoundError
from memlane.domain.models import Project


class DynamoProjectStore(DynamoTable):
    """ProjectStore on the metadata table."""

    def create_project(self, project: Project) -> Project:
        org = ks.org_pk(project.organization_id)
        project_item = {
            ks.PK: org,
            ks.SK: ks.project_sk(project.id),
            "entity": "project",
            **model_attributes(project),
        }
        slug_item = {ks.PK: org, ks.SK: ks.project_slug_sk(project.slug), "project_id": project.id}
        self._transact(
            [conditional_put(self.table_name, project_item), conditional_put(self.table_name, slug_item)],
            conflict=f"project slug '{project.slug}' already exists",
        )
        return project

    def get_project(self, org_id: str, project_id: str) -> Project | None:
        item = self._get(ks.org_pk(org_id), ks.project_sk(project_id))
        return model_from_item(Project, item) if item else None

    def find_project_by_slug(self, org_id: str, slug: str) -> Project | None:
        item = self._get(ks.org_pk(org_id), ks.project_slug_sk(slug))
        return self.get_project(org_id, item["project_id"]["S"]) if item else None

    def list_projects(self, org_id: str) -> list[Project]:
        items = self._query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={
                ":pk": {"S": ks.org_pk(org_id)},
                ":prefix": {"S": ks.PROJECT_SK_PREFIX},
            },
            ConsistentRead=True,
        )
        projects = [model_from_item(Project, item) for item in items]
        # the default project first, as the SQLite store lists them
        return sorted(projects, key=lambda p: (not p.is_default, p.created_at, p.id))

    def count_documents(self, org_id: str, *, current_only: bool = False) -> dict[str, int]:
        counts: dict[str, int] = {}
        for project in self.list_projects(org_id):
            kwargs: dict[str, Any] = {
                "TableName": self.table_name,
                "IndexName": ks.GSI1,
                "KeyConditionExpression": "gsi1pk = :pk",
                "ExpressionAttributeValues": {":pk": {"S": ks.project_gsi_pk(org_id, project.id)}},
                "Select": "COUNT",
            }
            if current_only:  # Count is taken after the filter
                kwargs["FilterExpression"] = "attribute_not_exists(superseded_by)"
            total = 0
            while True:
                page = self._call("query", **kwargs)
                total += int(page.get("Count", 0))
                if "LastEvaluatedKey" not in page:
                    break
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
            counts[project.id] = total
        return counts

    def update_project(self, project: Project) -> None:
        """Rewrites the project item; a new slug moves the slug item (the new one must be free)."""
        org = ks.org_pk(project.organization_id)
        current = self.get_project(project.organization_id, project.id)
        if current is None:
            raise NotFoundError(f"project {project.id} not found")
        project_item = {ks.PK: org, ks.SK: ks.project_sk(project.id), "entity": "project",
                        **model_attributes(project)}
        operations: list[dict[str, Any]] = [{
            "Put": {"TableName": self.table_name, "Item": serialize(project_item),
                    "ConditionExpression": "attribute_exists(pk)"},
        }]
        if current.slug != project.slug:
            slug_item = {ks.PK: org, ks.SK: ks.project_slug_sk(project.slug), "project_id": project.id}
            operations.append(conditional_put(self.table_name, slug_item))
            operations.append({"Delete": {"TableName": self.table_name,
                                          "Key": _key(org, ks.project_slug_sk(current.slug))}})
        self._transact(operations, conflict=f"project slug '{project.slug}' already exists")

    def delete_project(self, org_id: str, project_id: str) -> bool:
        """The project item and its slug item; its documents are removed first by the caller."""
        project = self.get_project(org_id, project_id)
        if project is None:
            return False
        org = ks.org_pk(org_id)
        self._transact(
            [{"Delete": {"TableName": self.table_name, "Key": _key(org, ks.project_sk(project_id))}},
             {"Delete": {"TableName": self.table_name, "Key": _key(org, ks.project_slug_sk(project.slug))}}],
            conflict=f"project {project_id} could not be deleted",
        )
        return True
