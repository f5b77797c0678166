import { Injectable } from '@nestjs/common';
import type { Admitted, Refused } from '@tally/admission';
import type { WorkloadKind } from '@tally/capacity';

type Listener = (kind: WorkloadKind, result: Admitted | Refused) => void;

/** Every decision of the process's Admitter, for whoever observes them (the API's admission metrics). */
@Injectable()
export class AdmissionDecisions {
  private readonly listeners: Listener[] = [];

  onDecision(listener: Listener): void {
    this.listeners.push(listener);
  }

  emit(kind: WorkloadKind, result: Admitted | Refused): void {
    for (const listener of this.listeners) listener(kind, result);
  }
}
