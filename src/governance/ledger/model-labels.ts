/**
 * The `model` label of the ledger's metrics. A caller chooses the model name it sends, and a call the upstream
 * refuses is recorded under that name too, so names from calls cannot be trusted to stay few: a tenant sending
 * junk names would take every label place a first-come cap has. A model keeps its own label only when the
 * operator named it: the configuration (a registration's chat or embedding model, or its `models`), or an entry
 * of the price table (a dated snapshot of a priced model counts under the priced name: `gpt-4o-2024-08-06` is
 * `gpt-4o`). Every other name is counted as `other`; `/v1/usage` keeps the exact names.
 */
import { OTHER_LABEL } from './label-cap';
import { findNamedPrice, type PricingTable } from './pricing';

/** Whether the configuration of the registration `provider` names `model` (AiClient.servesModel). */
export type ConfiguredModels = (provider: string, model: string) => boolean;

/** Labels remembered per registration and model, up to this many, then forgotten at once (names are caller-chosen). */
const REMEMBERED_LABELS = 1000;

export class ModelLabels {
  /** registration -> model -> label: nested, so a lookup builds no key string. */
  private readonly labels = new Map<string, Map<string, string>>();
  private remembered = 0;

  constructor(
    private readonly table: PricingTable,
    private readonly configured: ConfiguredModels,
  ) {}

  label(provider: string, kind: string, model: string): string {
    const known = this.labels.get(provider)?.get(model);
    if (known !== undefined) return known;
    const label = this.configured(provider, model) ? model : (findNamedPrice(this.table, provider, kind, model)?.name ?? OTHER_LABEL);
    if (this.remembered >= REMEMBERED_LABELS) {
      this.labels.clear();
      this.remembered = 0;
    }
    let byModel = this.labels.get(provider);
    if (!byModel) this.labels.set(provider, (byModel = new Map()));
    byModel.set(model, label);
    this.remembered += 1;
    return label;
  }
}
