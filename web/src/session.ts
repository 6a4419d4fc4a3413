import type { Answer } from './api';
export type SessionInfo = Answer<'getSession'>;
