import { v7 as uuidv7 } from 'uuid';

export type IdPrefix =
  | 'msg' | 'tpl' | 'lst' | 'sub' | 'seg' | 'cmp' | 'hook' | 'key' | 'dom' | 'evt' | 'aut'
  | 'sbx' | 'acc' | 'imp' | 'sup' | 'dlv' | 'rpt' | 'run' | 'usr';

/**
 * Public ids: a prefix and a UUIDv7 in hex. UUIDv7 starts with the millisecond time, so ids
 * sort by creation and serve as stable pagination cursors; the random tail makes them opaque.
 */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${uuidv7().replaceAll('-', '')}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(prefix + '_') && /^[a-z]+_[0-9a-f]{32}$/.test(id);
}
